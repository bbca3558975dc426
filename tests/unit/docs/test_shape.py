"""The source keeps to its limits: no file over 600 lines, no function over 60 but those listed
(none growing), and no more uses of Any than the ceiling."""

from tools import shape


def test_no_file_over_the_limit():
    assert shape.long_files() == []


def test_no_function_over_the_limit_but_those_listed_and_none_grows():
    over = {f.key: f.length for f in shape.long_functions()}
    grown = {k: n for k, n in over.items() if n > shape.LONG_FUNCTIONS.get(k, shape.MAX_FUNCTION_LINES)}
    assert grown == {}, "shorten these (or list them in tools/shape.py's LONG_FUNCTIONS, never longer)"


def test_the_list_of_long_functions_names_only_long_ones():
    """A function shortened (or gone) leaves the list, so the list only shrinks."""
    over = {f.key for f in shape.long_functions()}
    assert set(shape.LONG_FUNCTIONS) - over == set()


def test_any_stays_under_its_ceiling():
    total = sum(shape.any_uses().values())
    assert total <= shape.ANY_CEILING, f"{total} uses of Any, over the ceiling of {shape.ANY_CEILING}"


def test_the_count_sees_an_any_in_an_annotation(tmp_path, monkeypatch):
    package = tmp_path / "kubesched" / "demo"
    package.mkdir(parents=True)
    (package / "m.py").write_text("from typing import Any\n\ndef f(x: Any) -> dict[str, Any]:\n    return {}\n")
    monkeypatch.setattr(shape, "SRC", tmp_path / "kubesched")
    assert shape.any_uses() == {"demo": 2}
    assert [f.key for f in shape.functions()] == ["demo/m.py:f"]
