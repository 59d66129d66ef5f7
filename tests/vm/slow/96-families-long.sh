#!/usr/bin/env bash
# The interface-family test of the default suite (tests/vm/96-families.sh)
# with 1,000,000 work requests through every family function of each QP
# type (SROCE_FAMILIES_PER_FUNCTION=1: RC's ten functions, UC's nine,
# UD's three), every completion through poll_formatted, every byte
# checked. The three types run at once (SROCE_FAMILIES_PARALLEL=1). Hours
# under TCG: make test-vm-slow only.
# vm-timeout: 21600
export SROCE_FAMILIES_N=${SROCE_FAMILIES_N:-1000000}
export SROCE_FAMILIES_PER_FUNCTION=1 SROCE_FAMILIES_PARALLEL=1
exec bash "$(dirname "$0")/../96-families.sh"
