"""Which changes stay inside `#[cfg(test)] mod` blocks (toolchains/rust/test_code.py): the
reader of Rust's braces, and the cases where it must say no so the whole crate is tested."""

from __future__ import annotations

import pytest

from agent_habitat.verify.toolchains.rust.test_code import cfg_test_blocks, only_test_code

_SRC = """pub fn double(x: u64) -> u64 {
    x * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles() {
        let s = "}{ not a brace";
        let r = r#"also "}" not"#;
        let c = '}';
        let l: &'static str = "x";
        /* } /* nested { */ */
        // }
        assert_eq!(double(2), 4);
    }
}
"""


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_the_block_is_read_past_strings_chars_lifetimes_and_comments() -> None:
    lines = _lines(_SRC)
    assert cfg_test_blocks(lines) == [(5, len(lines) - 1)]


def test_a_change_inside_the_test_module_is_test_code() -> None:
    now = _SRC.replace("double(2), 4", "double(3), 6")
    assert only_test_code(_lines(now), _lines(_SRC))


def test_a_test_added_at_the_end_of_the_module_is_test_code() -> None:
    now = _SRC.replace(
        "        assert_eq!(double(2), 4);\n    }\n",
        "        assert_eq!(double(2), 4);\n    }\n    #[test]\n    fn more() {}\n",
    )
    assert only_test_code(_lines(now), _lines(_SRC))


@pytest.mark.parametrize(
    "now",
    [
        _SRC.replace("x * 2", "x * 3"),  # the code itself
        _SRC.replace("#[cfg(test)]", '#[cfg(any(test, feature = "t"))]'),
        _SRC.replace("mod tests {", "mod checks {"),  # the block's own line
        _SRC + "pub fn extra() {}\n",  # after the block
        _SRC.replace("    }\n}\n", "    }\n}\npub fn leak() {}\n#[cfg(test)]\nmod more {\n"),
        _SRC.replace('"}{ not a brace"', '"}{ not a brace'),  # an unclosed string
    ],
)
def test_anything_else_is_not(now: str) -> None:
    assert not only_test_code(_lines(now + ("}\n" if "mod more" in now else "")), _lines(_SRC))


def test_a_test_module_above_code_that_moves_is_not_test_code() -> None:
    # The code below would move by a line: its line!() and panic locations change.
    src = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n\npub fn after() {}\n"
    grown = src.replace("fn t() {}", "fn t() {}\n    #[test]\n    fn u() {}")
    same_size = src.replace("fn t() {}", "fn v() {}")
    assert not only_test_code(_lines(grown), _lines(src))
    assert only_test_code(_lines(same_size), _lines(src))


def test_a_new_file_or_no_change_is_not_test_code() -> None:
    assert not only_test_code(_lines(_SRC), None)
    assert not only_test_code(_lines(_SRC), _lines(_SRC))
