#!/usr/bin/env bash
# The extended-verbs test of the default suite (tests/vm/91-extended-verbs.sh)
# with 1,000,000 work requests through each builder of each QP type
# (SROCE_WR_EX_PER_BUILDER=1: every opcode builder and each of the four
# gather setters, sge, sge_list, inline_data and inline_data_list; RC's nine
# opcodes take about 9.5 million work requests, UC's four about 4.2
# million, UD's two about 2.1 million), every completion, byte and
# timestamp checked. The three types run at once (SROCE_WR_EX_PARALLEL=1):
# about 50 minutes under TCG (2026-11-28: RC 2843 s, UC 1779 s, UD 798 s);
# one after the other they took about two and a half hours.
# vm-timeout: 14400
export SROCE_WR_EX_N=${SROCE_WR_EX_N:-1000000}
export SROCE_WR_EX_PER_BUILDER=${SROCE_WR_EX_PER_BUILDER:-1}
export SROCE_WR_EX_PARALLEL=${SROCE_WR_EX_PARALLEL:-1}
exec bash "$(dirname "$0")/../91-extended-verbs.sh"
