#!/usr/bin/env bash
# NVMe over Fabrics on sroce (tests/vm/93-nvmeof.sh) with 1 GiB through
# each of its four fio runs (the default suite moves 64 MiB each): write
# with crc32c in every block and read it all back verified, at queue depths
# 1 and 32. 256 MiB per run (NVMEOF_MB=256 through scripts/repeat-vm-test.sh)
# took 495 s on 6.1 (2026-11-28: 2-14 MB/s under TCG); 1 GiB per run (the
# default here) 1829 s, 442381 fast_regs = remote_invs.
# vm-timeout: 10800
export NVMEOF_MB=${NVMEOF_MB:-1024}
exec bash "$(dirname "$0")/../93-nvmeof.sh"
