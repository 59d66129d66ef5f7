#!/usr/bin/env bash
# The faulty-network test of the default suite (tests/vm/82-netem.sh) with
# every fault (adds loss 5% and all mixed), ib_write_bw, twice the
# operations and messages up to 1 MiB: about 12 minutes.
# vm-timeout: 900
NETEM_FULL=1 exec bash "$(dirname "$0")/../82-netem.sh"
