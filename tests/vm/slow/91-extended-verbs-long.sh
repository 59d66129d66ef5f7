#!/usr/bin/env bash
# The extended-verbs test of the default suite (tests/vm/91-extended-verbs.sh)
# with 1,000,000 work requests per QP type through the builders (RC: about
# 140,000 per builder), every completion, byte and timestamp checked: about
# 20 minutes under TCG (3,000 work requests a second).
# vm-timeout: 3600
export SROCE_WR_EX_N=${SROCE_WR_EX_N:-1000000}
exec bash "$(dirname "$0")/../91-extended-verbs.sh"
