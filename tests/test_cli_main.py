"""The CLI's top level: how it ends on Ctrl-C and on a closed pipe (issue 14, items 5 and 12)."""
import subprocess
import sys

import numpy as np

import lutzip
from lutzip import cli


def test_ctrl_c_says_interrupted(monkeypatch, capsys):
    def boom(args):
        raise KeyboardInterrupt
    parser = cli.build_parser()
    real = parser.parse_args

    def parse(argv=None):
        ns = real(argv)
        ns.func = boom
        return ns
    monkeypatch.setattr(cli, "build_parser", lambda *a: type("P", (), {"parse_args": staticmethod(parse)})())
    rc = cli.main(["info", "x.lutz"])
    err = capsys.readouterr().err
    assert rc == 130
    assert err.strip() == "lutzip: interrupted"


def test_closed_pipe_ends_quietly(tmp_path):
    arrays = {f"t{i}": np.arange(50, dtype=np.int16) for i in range(200)}
    f = tmp_path / "m.lutz"
    lutzip.save(f, arrays)
    p = subprocess.Popen([sys.executable, "-m", "lutzip.cli", "info", str(f)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    first = p.stdout.readline()
    p.stdout.close()          # the reader goes away after one line, as `| head -1` does
    err = p.stderr.read().decode()
    rc = p.wait(timeout=120)
    assert first
    assert "Broken pipe" not in err and "Traceback" not in err, err
    assert rc in (0, 141), (rc, err)


def test_codec_commands_skip_the_hdl_and_board_modules(tmp_path):
    """``lutzip compress/decompress/info/bench`` build only the codec commands' parsers (start-up): no hdl,
    firmware or board module is imported, and each command's options are those of the whole tree."""
    f = tmp_path / "m.lutz"
    lutzip.save(f, {"w": np.arange(600, dtype=np.int16)})
    code = ("import sys; from lutzip import cli; rc = cli.main(['info', sys.argv[1]]); "
            "print(rc, sorted({m.split('.')[1] for m in sys.modules if m.startswith('lutzip.')}))")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("0 "), last
    for area in ("hdl", "firmware", "board", "vboard"):
        assert f"'{area}'" not in last, last
    full, lean = cli.build_parser(), cli.build_parser("decompress")
    for cmd in sorted(cli.CODEC_COMMANDS):
        helps = []
        for p in (full, lean):
            sub = next(a for a in p._actions if a.dest == "command")
            helps.append(sub.choices[cmd].format_help())
        assert helps[0] == helps[1], cmd
    assert "hdl" in next(a for a in full._actions if a.dest == "command").choices
    assert cli._command(["--version"]) is None and cli._command(["info", "x"]) == "info"
