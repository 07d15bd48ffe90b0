"""Parse runner's JUnit reports with junitparser (the parser of
EnricoMi/publish-unit-test-result-action) and check the counts it reads.

Usage: junit_check.py FILE:TESTS:FAILURES:ERRORS:SKIPPED ...
Counts are of testcases, as junitparser reports them per case result.
"""
import sys

from junitparser import Error, Failure, JUnitXml, Skipped


def counts(path):
    xml = JUnitXml.fromfile(path)
    tests = failures = errors = skipped = 0
    for suite in xml:
        for case in suite:
            tests += 1
            kinds = {type(r) for r in case.result}
            if Error in kinds:
                errors += 1
            elif Failure in kinds:
                failures += 1
            elif Skipped in kinds:
                skipped += 1
        # The suite's own totals must agree with its cases.
        own = (suite.tests, suite.failures, suite.errors, suite.skipped)
        seen = (
            len(list(suite)),
            sum(1 for c in suite if any(isinstance(r, Failure) for r in c.result)),
            sum(1 for c in suite if any(isinstance(r, Error) for r in c.result)),
            sum(1 for c in suite if any(isinstance(r, Skipped) for r in c.result)),
        )
        if own != seen:
            sys.exit(f"{path}: suite {suite.name}: attributes say {own}, cases say {seen}")
    return tests, failures, errors, skipped


def main():
    bad = 0
    for arg in sys.argv[1:]:
        path, *want = arg.rsplit(":", 4)
        want = tuple(int(x) for x in want)
        got = counts(path)
        status = "ok" if got == want else "MISMATCH"
        print(f"junitparser {path}: tests/failures/errors/skipped {got} (expected {want}) {status}")
        bad += got != want
    sys.exit(1 if bad else 0)


main()
