#!/usr/bin/env bash
# `make stack-test`: build every image with podman, without any registry, and run
# docker/compose.yaml end to end on CPU. Needs root and a few minutes (not part of `make test`).
#
#  1. a Debian base from the configured apt mirror (debootstrap), `podman import`ed, with the
#     host's CA store (HTTPS may go through a re-signing proxy);
#  2. stand-ins for the bases the Dockerfiles name, passed as their build ARGs (PYTHON_IMAGE,
#     PYTORCH_IMAGE) and for postgres/redis (tools/stack/compose.standins.yaml); torch is the
#     CPU wheel, installed as CI installs it (the machine's pip configuration and wheels);
#  3. docker/Dockerfile and docker/Dockerfile.runner built as they are;
#  4. `podman-compose up` of docker/compose.yaml (the CPU file); then: migrate exited 0, the bot
#     answers /readyz, the worker reports full isolation, and one job goes from the bot image's
#     runner client through Redis to the worker and back.
# podman runs with runc, cgroupfs and the host's own rlimits (see containers.conf below).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${STACK_WORK:-/var/tmp/torchdrill-stack}
PROJECT=torchdrill-stacktest
SUITE=${STACK_SUITE:-bookworm}
TORCH_VERSION=$(sed -n 's/^torch==//p' .ci/constraints.txt)
COMPOSE=(podman-compose -p "$PROJECT" -f docker/compose.yaml -f tools/stack/compose.standins.yaml)
log() { printf '[stack-test %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { log "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (podman builds and the runner's sandbox)"
need=()
for tool in podman runc debootstrap podman-compose; do
    command -v "$tool" >/dev/null || need+=("$tool")
done
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap podman-compose >/dev/null
fi
mkdir -p "$WORK"
# podman raises RLIMIT_NOFILE and RLIMIT_NPROC in every container by default (to 1048576 and
# more); on these hosts the container's init may not (runc: "error setting rlimit type 7" /
# "type 6"), even to the host's own limits. 16384 each is what runc accepted here.
LIMIT=${STACK_RLIMIT:-16384}
cat > "$WORK/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$LIMIT:$LIMIT", "nproc=$LIMIT:$LIMIT"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF=$WORK/containers.conf
[ -e .env ] || { touch .env; CREATED_ENV=1; }

cleanup() {
    log "cleaning up"
    "${COMPOSE[@]}" down -v >/dev/null 2>&1 || true
    [ -z "${CREATED_ENV:-}" ] || rm -f .env
}
trap cleanup EXIT

# 1. the base
BASE=localhost/torchdrill-standin-debian:$SUITE
if ! podman image exists "$BASE"; then
    mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    mirror=${mirror:-$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)}
    log "debootstrap $SUITE from $mirror"
    rm -rf "$WORK/rootfs"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$SUITE" "$WORK/rootfs" "$mirror" > "$WORK/debootstrap.log" 2>&1 \
        || { tail -20 "$WORK/debootstrap.log"; die "debootstrap"; }
    cp /etc/ssl/certs/ca-certificates.crt "$WORK/rootfs/etc/ssl/certs/ca-certificates.crt"
    rm -rf "$WORK/rootfs/var/cache/apt/archives"/*.deb
    tar -C "$WORK/rootfs" -c . | podman import - "$BASE" >/dev/null 2>&1
fi

# 2. stand-ins
# pip inside a build sees what pip sees here (`pip config debug`: global and user files, local
# wheels and indexes), so `pip install torch==X` resolves to the same (CPU) wheel as in CI.
PIP_MOUNTS=()
for path in /etc/pip.conf /etc/xdg/pip /opt/wheels /opt/pypi /opt/pypi-more; do
    [ -e "$path" ] && PIP_MOUNTS+=(--volume "$path:$path:ro")
done
for path in "$HOME/.config/pip/pip.conf" "$HOME/.pip/pip.conf"; do
    [ -e "$path" ] && PIP_MOUNTS+=(--volume "$path:/root/${path#"$HOME"/}:ro")
done
build() {  # build TAG CONTAINERFILE [ARGS...]
    local tag=$1 file=$2; shift 2
    local out=$WORK/build-$(basename "$file").log
    log "build $tag from $file"
    podman build --network host --tag "$tag" --file "$file" "$@" . >"$out" 2>&1 \
        || { tail -30 "$out"; die "build of $file"; }
}
PYTHON_IMAGE=localhost/torchdrill-standin-python:3.11
PYTORCH_IMAGE=localhost/torchdrill-standin-pytorch:$TORCH_VERSION-cpu
build "$PYTHON_IMAGE" tools/stack/python.Containerfile --build-arg "BASE_IMAGE=$BASE"
build "$PYTORCH_IMAGE" tools/stack/pytorch.Containerfile --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" \
    --build-arg "TORCH_VERSION=$TORCH_VERSION" "${PIP_MOUNTS[@]}"
build localhost/torchdrill-standin-postgres:local tools/stack/postgres.Containerfile --build-arg "BASE_IMAGE=$BASE"
build localhost/torchdrill-standin-redis:local tools/stack/redis.Containerfile --build-arg "BASE_IMAGE=$BASE"

# 3. our images, from the Dockerfiles as they are (bases as build args)
build torchdrill-bot:local docker/Dockerfile --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" "${PIP_MOUNTS[@]}"
build torchdrill-runner:local docker/Dockerfile.runner --build-arg "PYTORCH_IMAGE=$PYTORCH_IMAGE" \
    "${PIP_MOUNTS[@]}"
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'torchdrill' | sed 's/^/  /'

# 4. the compose file
log "compose up (docker/compose.yaml, CPU)"
"${COMPOSE[@]}" down -v >/dev/null 2>&1 || true
"${COMPOSE[@]}" up -d >"$WORK/compose-up.log" 2>&1 || { tail -30 "$WORK/compose-up.log"; die "compose up"; }
container() { echo "${PROJECT}_$1_1"; }
wait_until() {  # wait_until SECONDS DESCRIPTION COMMAND...
    local limit=$1 what=$2; shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 2
    done
    log "$what"
}
exited_zero() { [ "$(podman inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$(container migrate)")" = "exited 0" ]; }
bot_ready() { podman exec "$(container bot)" python -c "import json, urllib.request as u; r = u.urlopen('http://127.0.0.1:8080/readyz', timeout=5); d = json.load(r); print(json.dumps(d)); assert d['status'] == 'ok'"; }
show_logs() { for s in postgres migrate redis runner bot; do log "--- $s"; podman logs --tail 15 "$(container "$s")" 2>&1 | cut -c1-300; done; }

wait_until 240 "migrate exited 0:" exited_zero || { show_logs; die "migrate did not exit 0"; }
podman logs "$(container migrate)" >"$WORK/migrate.log" 2>&1
tail -n 2 "$WORK/migrate.log" | sed 's/^/  /'
wait_until 180 "bot /readyz answers 200:" bot_ready || { show_logs; die "bot not ready"; }
bot_ready | sed 's/^/  /'
podman logs "$(container bot)" >"$WORK/bot.log" 2>&1
grep -m1 "no Discord or Slack token" "$WORK/bot.log" | cut -c1-200 | sed 's/^/  /' || true
# logs go to a file first: `podman logs | grep -q` fails under pipefail when grep stops early
worker_log() { podman logs "$(container runner)" >"$WORK/runner.log" 2>&1; }
worker_ready() { worker_log && grep -q '"runner worker ready' "$WORK/runner.log"; }
wait_until 180 "runner worker ready:" worker_ready || { show_logs; die "the worker is not ready"; }
grep -m1 '"isolation level: ' "$WORK/runner.log" | cut -c1-160 | sed 's/^/  /'
grep -q '"isolation level: full' "$WORK/runner.log" \
    || { show_logs; die "the runner container does not give full isolation"; }
log "runner isolation, as the image's entry point sets it up:"
podman exec "$(container runner)" torchdrill-runner-entrypoint torchdrill runner isolation | sed 's/^/  /'
log "a /run and a /submit: bot image's runner client -> Redis -> runner worker"
podman exec -i "$(container bot)" python - < tools/stack/run_job.py | sed 's/^/  /' \
    || { show_logs; die "a job did not come back done (or the reference was not judged solved)"; }
log "containers:"
podman ps -a --filter "label=io.podman.compose.project=$PROJECT" \
    --format '  {{.Names}} {{.Status}}' | sort
restarts=$(podman inspect -f '{{.RestartCount}}' "$(container runner)" "$(container bot)" | paste -sd' ')
log "restart counts (runner, bot): $restarts"
log "OK"
