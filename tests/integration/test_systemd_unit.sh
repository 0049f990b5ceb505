#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# systemd/cpusetd.service passes systemd-analyze verify.
cd "$(dirname "$0")/../.." || exit 1
exec tools/verify-unit.sh
