#!/bin/sh
# Claude Code, the real CLI at its pinned version (integration/hosts/versions),
# run non-interactively against the mock model server with Pigeon's hooks
# installed: every scenario of integration/hosts/scenarios.sh. Label
# "hosts"; skipped (exit 77) when the host cannot be installed, unless
# CI=true.
HOST=claude
. "$(dirname "$0")/hosts/scenarios.sh"
