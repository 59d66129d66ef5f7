#!/usr/bin/env bash
# The live fuzzer of the default suite (tests/vm/90-wire-fuzz.sh) for ten
# times as long (a 25000-operation victim, about 10 minutes), with a seed of
# the clock unless FUZZ_SEED is given: each run explores other mutations.
# The seed is printed; FUZZ_SEED=N replays a run.
# vm-timeout: 1800
export FUZZ_OPS=${FUZZ_OPS:-25000}
export FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
echo "  FUZZ_SEED=$FUZZ_SEED FUZZ_OPS=$FUZZ_OPS"
exec bash "$(dirname "$0")/../90-wire-fuzz.sh"
