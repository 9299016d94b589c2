#!/usr/bin/env bash
# Installs onnxcost for the GitHub Action (action.yml) into
# $RUNNER_TEMP/onnxcost-action-bin and puts it on the job's PATH, in two
# steps: `action_install.sh prebuilt` (before Go is set up; writes
# installed=true|false to $GITHUB_OUTPUT) and `action_install.sh build`
# (builds unless INSTALLED is true, then puts the binary on the PATH).
#
# With a release tag as the action's ref (uses: onnxcost/onnxcost@v1.2.3)
# it first tries that release's prebuilt binary, which needs only the
# github.com downloads every runner reaches: the archive for the runner's
# OS and architecture and the release's SHA256SUMS, checked before
# anything is unpacked (.github/workflows/release.yml publishes both).
# Any other ref, a missing asset or prebuilt: false builds from the
# action's own checkout with the Go toolchain the action set up; a bad
# checksum is never installed. prebuilt: true makes a failed download an
# error instead of a build.
#
# Environment: ACTION_PATH (the action's checkout), ACTION_REF,
# ACTION_REPOSITORY (owner/name), INPUT_PREBUILT (auto|true|false),
# INSTALLED (build step), RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP,
# GITHUB_OUTPUT, GITHUB_PATH.
set -euo pipefail

bin="${RUNNER_TEMP:-/tmp}/onnxcost-action-bin"
mkdir -p "$bin"
mode="${INPUT_PREBUILT:-auto}"
case "$mode" in
auto | true | false) ;;
*)
	echo "::error::prebuilt must be auto, true or false, got '$mode'"
	exit 2
	;;
esac

# asset names the release archive for this runner, or fails.
asset() {
	local os arch
	case "${RUNNER_OS:-}" in
	Linux) os=linux ;;
	macOS) os=darwin ;;
	Windows) os=windows ;;
	*) return 1 ;;
	esac
	case "${RUNNER_ARCH:-}" in
	X64) arch=amd64 ;;
	ARM64) arch=arm64 ;;
	*) return 1 ;;
	esac
	echo "onnxcost_${os}_${arch}.tar.gz"
}

# fetch downloads release file $1 to $2.
fetch() {
	curl -fsSL --retry 2 --connect-timeout 10 --max-time 120 -o "$2" \
		"https://github.com/${ACTION_REPOSITORY}/releases/download/${ACTION_REF}/$1"
}

# prebuilt installs the release's binary; it fails (installing nothing)
# when there is none for this ref and runner or its checksum is wrong.
prebuilt() {
	[[ "${ACTION_REF:-}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || {
		echo "ref '${ACTION_REF:-}' is not a release tag: no prebuilt binary"
		return 1
	}
	local name dir
	name=$(asset) || {
		echo "no prebuilt binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
		return 1
	}
	dir=$(mktemp -d)
	fetch "$name" "$dir/$name" && fetch SHA256SUMS "$dir/SHA256SUMS" || {
		echo "could not download $name of ${ACTION_REPOSITORY}@${ACTION_REF}"
		return 1
	}
	local want got
	want=$(awk -v f="$name" '$2 == f || $2 == "*" f { print $1 }' "$dir/SHA256SUMS")
	got=$( (sha256sum "$dir/$name" 2>/dev/null || shasum -a 256 "$dir/$name") | awk '{ print $1 }')
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		echo "::error::checksum of $name does not match the release's SHA256SUMS: not installed"
		return 1
	fi
	tar -xzf "$dir/$name" -C "$bin" onnxcost 2>/dev/null || tar -xzf "$dir/$name" -C "$bin" onnxcost.exe
}

case "${1:-}" in
prebuilt)
	installed=false
	if [ "$mode" != false ]; then
		if prebuilt; then
			installed=true
			echo "installed the prebuilt onnxcost of ${ACTION_REPOSITORY}@${ACTION_REF}"
		elif [ "$mode" = true ]; then
			echo "::error::prebuilt: true, but no verified prebuilt binary for ${ACTION_REPOSITORY}@${ACTION_REF:-?}"
			exit 1
		fi
	fi
	echo "installed=$installed" >>"$GITHUB_OUTPUT"
	;;
build)
	if [ "${INSTALLED:-}" != true ]; then
		(cd "$ACTION_PATH" && CGO_ENABLED=0 GOBIN="$bin" go install ./cmd/onnxcost)
	fi
	echo "$bin" >>"$GITHUB_PATH"
	"$bin/onnxcost" --version
	;;
*)
	echo "usage: action_install.sh prebuilt|build" >&2
	exit 2
	;;
esac
