-- Helpers of the GHDL virtual board test benches (lutzip.vboard.ghdl): hex text <-> bytes.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

package vboard_pkg is
    type byte_array is array (natural range <>) of std_logic_vector(7 downto 0);
    function hexval(c : character) return natural;
    function hexchar(n : natural) return character;
end package vboard_pkg;

package body vboard_pkg is
    function hexval(c : character) return natural is
    begin
        case c is
            when '0' to '9' => return character'pos(c) - character'pos('0');
            when 'a' to 'f' => return character'pos(c) - character'pos('a') + 10;
            when 'A' to 'F' => return character'pos(c) - character'pos('A') + 10;
            when others => return 0;
        end case;
    end function;

    function hexchar(n : natural) return character is
        constant digits : string(1 to 16) := "0123456789abcdef";
    begin
        return digits(n mod 16 + 1);
    end function;
end package body vboard_pkg;
