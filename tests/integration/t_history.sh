#!/usr/bin/env bash
# The history checker (history.py) finds each anomaly it claims to: lost acknowledged writes,
# offsets with two values, duplicates, phantoms, failed-but-stored writes, consumers going
# backwards, disorder, missing values; and passes a clean history. It needs no broker.
# timeout: 30
source "$(dirname "$0")/lib.sh"
cd "$ROOT/tests/integration"
$PY history_test.py || fail "history checker self-test"
