"""The TAP/KTAP parser on canned output (host only)."""

from schedlab import tap

KUNIT_CONSOLE = """\
[    0.512] KTAP version 1
[    0.512] 1..2
[    0.513]     KTAP version 1
[    0.513]     # Subtest: alpha
[    0.513]     1..2
[    0.514]     ok 1 first
[    0.514]     # second: EXPECTATION FAILED at lib/x.c:10
[    0.514]     not ok 2 second
[    0.515] # alpha: pass:1 fail:1 skip:0 total:2
[    0.515] not ok 1 alpha
[    0.516]     KTAP version 1
[    0.516]     # Subtest: beta
[    0.516]     1..1
[    0.517]     ok 1 only # SKIP not here
[    0.517] ok 2 beta
"""


def test_plain_tap_pass_and_skip():
    t = tap.parse("TAP version 13\n1..3\nok 1 - a\nok 2 b # SKIP no device\nok 3\n")
    assert t.problems() == []
    assert [p.name for p in t.points] == ["a", "b", ""]
    assert t.points[1].skipped


def test_failure_plan_and_bail_out_are_problems():
    t = tap.parse("1..3\nok 1 a\n# because\nnot ok 2 b\n")
    probs = t.problems()
    assert "planned 3 tests, ran 2" in probs
    assert any("not ok 2 b" in p and "because" in p for p in probs)
    assert tap.parse("1..1\nBail out! no kernel\n").problems()[0].startswith("bailed out")
    assert tap.parse("ok 1 a\n").problems() == ["no plan line"]


def test_todo_is_not_a_failure():
    assert tap.parse("1..1\nnot ok 1 later # TODO not yet\n").problems() == []


def test_kunit_suites_from_console():
    suites = tap.kunit_suites(KUNIT_CONSOLE)
    assert set(suites) == {"alpha", "beta"}
    alpha = suites["alpha"]
    assert [p.name for p in alpha.failures()] == ["second", "suite alpha"]
    assert "EXPECTATION FAILED" in alpha.failures()[0].diagnostics[0]
    assert suites["beta"].problems() == []
    assert suites["beta"].points[0].skipped


def test_kselftest_style():
    out = ("TAP version 13\n1..2\n# selftests: rseq: basic_test\n"
           "ok 1 selftests: rseq: basic_test\n"
           "not ok 2 selftests: timers: posix_timers # exit=1\n")
    t = tap.parse(out)
    assert [p.name for p in t.failures()] == ["selftests: timers: posix_timers"]
