#!/usr/bin/env bash
# Installs what the build (and, with "test", the test tiers) need, only when missing.
# Debian packages come through apt-get; npm packages from tests/integration/node's lockfile.
set -euo pipefail
mode=${1:-build}
cd "$(dirname "$0")/.."

build_pkgs="gcc make librdkafka-dev libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libssl-dev"
test_pkgs="kcat openssl strace python3 python3-kafka python3-confluent-kafka python3-avro python3-protobuf python3-jsonschema python3-requests clang libclang-rt-14-dev nodejs npm procps iproute2 libfiu-dev fiu-utils golang-go golang-github-shopify-sarama-dev"
pkgs=$build_pkgs
[ "$mode" = test ] && pkgs="$pkgs $test_pkgs"

missing=()
for p in $pkgs; do
    # node and npm may come from outside Debian (nodesource, nvm): accept the commands.
    case $p in nodejs) command -v node >/dev/null && continue ;; npm) command -v npm >/dev/null && continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
        $sudo apt-get update >/dev/null 2>&1
        $sudo apt-get install -y --no-install-recommends "${missing[@]}"
    }
fi

if [ "$mode" = test ] && [ -f tests/integration/node/package-lock.json ] &&
   { [ ! -d tests/integration/node/node_modules/kafkajs ] ||
     [ ! -d tests/integration/node/node_modules/@platformatic/kafka ] ||
     [ ! -d tests/integration/node/node_modules/@kafkajs/confluent-schema-registry ]; }; then
    echo "deps: npm ci in tests/integration/node"
    (cd tests/integration/node && npm ci --no-audit --no-fund >/dev/null)
fi
