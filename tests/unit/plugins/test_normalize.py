import pytest

from kubesched.framework.normalize import default_normalize_score


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        (False, [0, 1, 2, 3], [0, 33, 66, 100]),  # 100*1//3 = 33, 100*2//3 = 66
        (True, [0, 1, 2, 3], [100, 67, 34, 0]),
        (False, [10, 20, 5], [50, 100, 25]),
        (False, [7, 7], [100, 100]),
        (False, [0, 0, 0], [0, 0, 0]),  # nothing to scale: left alone
        (True, [0, 0, 0], [100, 100, 100]),  # reversed all-zero: every node is best
        (False, [], []),
        (True, [], []),
        (False, [3, 0, 1], [100, 0, 33]),
        (True, [3, 0, 1], [0, 100, 67]),
    ],
)
def test_default_normalize_score(reverse, scores, expected):
    assert default_normalize_score(100, reverse, scores) is None
    assert scores == expected


def test_normalize_truncates_toward_zero_like_go():
    scores = [-1, 3]  # negative scores do not raise the maximum; -100/3 truncates to -33
    default_normalize_score(100, False, scores)
    assert scores == [-33, 100]


def test_normalize_with_another_max_priority():
    scores = [1, 2, 4]
    default_normalize_score(10, False, scores)
    assert scores == [2, 5, 10]
