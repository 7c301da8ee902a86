#!/usr/bin/env bash
# The reference pages in docs/ (every config key, every metric) are what the code says now:
# tests/integration/gen_docs.sh regenerates them and compares.
# timeout: 90
exec "$(dirname "$0")/gen_docs.sh" check
