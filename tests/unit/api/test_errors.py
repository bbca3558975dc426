import pytest

from kubesched.api import NOT_SUPPORTED, REQUIRED, FieldError


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (FieldError("spec.x", "abc", "bad"), 'spec.x: Invalid value: "abc": bad'),
        (FieldError("spec.x", 3, "bad"), "spec.x: Invalid value: 3: bad"),
        (FieldError("spec.x", 1.5, "bad"), "spec.x: Invalid value: 1.5: bad"),
        (FieldError("spec.x", None, "bad"), "spec.x: Invalid value: null: bad"),
        (FieldError("spec.x", ["a", "b"], "bad"), 'spec.x: Invalid value: []string{"a", "b"}: bad'),
        (FieldError("spec.x", [], "bad"), "spec.x: Invalid value: []string{}: bad"),
        (FieldError("spec.x", "v", "needed", kind=REQUIRED), "spec.x: Required value: needed"),
        (FieldError("", "v", "bad"), 'Invalid value: "v": bad'),
        (
            FieldError.not_supported("op", "Foo", ["In", "NotIn"]),
            'op: Unsupported value: "Foo": supported values: "In", "NotIn"',
        ),
    ],
)
def test_field_error_renders_like_upstream(error: FieldError, text: str) -> None:
    assert str(error) == text


def test_field_error_attributes() -> None:
    error = FieldError.not_supported("f", "x", ["a"])
    assert (error.field, error.value, error.kind) == ("f", "x", NOT_SUPPORTED)
    assert isinstance(error, ValueError)
