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
    monkeypatch.setattr(cli, "build_parser", lambda: type("P", (), {"parse_args": staticmethod(parse)})())
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
