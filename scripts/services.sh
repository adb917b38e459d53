#!/usr/bin/env bash
# services.sh — install and run the project-local PostgreSQL (with pgvector) that
# engram's embedded defaults, `make dev` and `make test` use.
#
#   scripts/services.sh install   install PostgreSQL 15 and build pgvector if missing (Debian 12, root)
#   scripts/services.sh start     install if needed, then start the project-local cluster
#   scripts/services.sh stop      stop it
#   scripts/services.sh status    say whether it runs and where its data lives
#   scripts/services.sh url       print the ENGRAM_DATABASE_URL of the local cluster (the app role)
#   scripts/services.sh owner-url print the ENGRAM_MIGRATE_DATABASE_URL (the owner role)
#
# The cluster is this checkout's own: data under .engram/pgdata (or, when the
# postgres user cannot reach the checkout, under /var/lib/engram/<hash of the
# checkout path>), listening on 127.0.0.1:${ENGRAM_PG_PORT:-55432}. It never
# touches the system cluster. Every step is idempotent: a second run is quick.
set -euo pipefail

ROOT="${ENGRAM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
PORT="${ENGRAM_PG_PORT:-55432}"
PG_MAJOR="${ENGRAM_PG_MAJOR:-15}"
PGVECTOR_VERSION="0.8.0"
# Two roles: OWNER_ROLE runs the migrations and owns the tables (and, with CREATEDB,
# lets the test harness clone a database per test); APP_ROLE is what serve and the
# workers connect as: it owns nothing, so it cannot lift row-level security.
OWNER_ROLE="engram"
APP_ROLE="engram_app"
APP_DB="engram"

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: error: %s\n' "$*" >&2; exit 1; }

cannot_install() {
	cat >&2 <<EOF
services: cannot install PostgreSQL with pgvector on this machine ($1).
  Install it yourself, then run this script again:
    - Debian/Ubuntu (as root): apt-get install postgresql postgresql-contrib postgresql-server-dev-$PG_MAJOR,
      then build pgvector $PGVECTOR_VERSION (https://github.com/pgvector/pgvector#installation);
    - macOS: brew install postgresql@17 pgvector, and put its bin directory on PATH;
  or run PostgreSQL and NATS in containers:
    docker compose -f deploy/compose.yaml up -d
    export ENGRAM_MIGRATE_DATABASE_URL='postgres://engram:engram@127.0.0.1:5432/engram?sslmode=disable'
    export ENGRAM_DATABASE_URL='postgres://engram_app:engram_app@127.0.0.1:5432/engram?sslmode=disable'
    export ENGRAM_NATS_URL='nats://127.0.0.1:4222'
EOF
	exit 1
}

# pg_bin finds the server binaries: Debian's versioned directory first, then pg_config.
pg_bin() {
	if [[ -x "/usr/lib/postgresql/$PG_MAJOR/bin/pg_ctl" ]]; then
		echo "/usr/lib/postgresql/$PG_MAJOR/bin"
	elif command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/pg_ctl" ]]; then
		pg_config --bindir
	fi
}

pg_config_bin() {
	local bin
	bin="$(pg_bin)"
	if [[ -n "$bin" && -x "$bin/pg_config" ]]; then
		echo "$bin/pg_config"
	elif command -v pg_config >/dev/null 2>&1; then
		command -v pg_config
	fi
}

have_pgvector() {
	local pgc share
	pgc="$(pg_config_bin)"
	[[ -n "$pgc" ]] || return 1
	share="$("$pgc" --sharedir)"
	[[ -f "$share/extension/vector.control" ]]
}

apt_updated=0
apt_update() {
	if [[ $apt_updated -eq 0 ]]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		apt_updated=1
	fi
}

apt_install() {
	apt_update
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

build_pgvector() {
	local work list pgc
	work="$(mktemp -d)"
	list="$work/trixie-src.list"
	# Debian 12 ships no pgvector; trixie's source package builds against PostgreSQL 15.
	# A sources file of our own keeps the system's apt configuration untouched.
	echo "deb-src http://deb.debian.org/debian trixie main" >"$list"
	apt_install postgresql-server-dev-"$PG_MAJOR" make gcc libc6-dev
	log "fetching the pgvector source package from Debian trixie"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq \
		-o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
		-o APT::Get::List-Cleanup=0 >&2
	chmod 755 "$work"
	(cd "$work" && apt-get source -qq --download-only \
		-o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- pgvector >&2)
	local tarball
	tarball="$(ls "$work"/pgvector_*.orig.tar.* 2>/dev/null | head -n1)"
	[[ -n "$tarball" ]] || die "could not download the pgvector source package (see the apt output above)"
	mkdir -p "$work/src"
	tar -xf "$tarball" -C "$work/src" --strip-components=1
	pgc="$(pg_config_bin)"
	log "building pgvector ($(basename "$tarball"))"
	make -s -C "$work/src" PG_CONFIG="$pgc" OPTFLAGS="" >&2
	make -s -C "$work/src" PG_CONFIG="$pgc" install >&2
	rm -rf "$work"
}

cmd_install() {
	if [[ -n "$(pg_bin)" ]] && have_pgvector; then
		return 0
	fi
	[[ "$(uname -s)" == "Linux" ]] || cannot_install "$(uname -s) is not Debian"
	[[ -f /etc/debian_version ]] || cannot_install "not a Debian-based system"
	[[ "$(id -u)" -eq 0 ]] || cannot_install "installing packages needs root"
	command -v apt-get >/dev/null 2>&1 || cannot_install "apt-get is missing"
	if [[ -z "$(pg_bin)" ]]; then
		apt_install postgresql-"$PG_MAJOR" postgresql-contrib
	fi
	have_pgvector || build_pgvector
	have_pgvector || die "pgvector is still missing after the build"
	log "PostgreSQL $PG_MAJOR with pgvector installed"
}

# The server refuses to run as root, so as root the cluster belongs to the postgres user.
as_owner() {
	if [[ "$(id -u)" -eq 0 ]]; then
		# From / : the postgres user may not be allowed into the caller's directory.
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

# state_dir picks where the cluster lives: .engram/ in the checkout when its owner can
# write there, otherwise a directory keyed by the checkout path that the postgres user owns.
state_dir() {
	local dir="$ROOT/.engram"
	if [[ -f "$dir/location" ]]; then
		cat "$dir/location"
		return
	fi
	if [[ "$(id -u)" -ne 0 ]]; then
		echo "$dir"
		return
	fi
	mkdir -p "$dir/pg"
	chown postgres: "$dir/pg" 2>/dev/null || true
	if runuser -u postgres -- test -w "$dir/pg" 2>/dev/null; then
		echo "$dir/pg"
	else
		local key
		key="$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"
		echo "/var/lib/engram/$key"
	fi
}

url() {
	echo "postgres://$APP_ROLE@127.0.0.1:$PORT/$APP_DB?sslmode=disable"
}

owner_url() {
	echo "postgres://$OWNER_ROLE@127.0.0.1:$PORT/$APP_DB?sslmode=disable"
}

is_running() {
	local bin dir
	bin="$(pg_bin)"
	[[ -n "$bin" ]] || return 1
	dir="$(state_dir)"
	[[ -f "$dir/data/PG_VERSION" ]] || return 1
	as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

psql_admin() {
	local dir
	dir="$(state_dir)"
	PGOPTIONS="-c client_min_messages=warning" as_owner "$(pg_bin)/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/run" -p "$PORT" -U postgres "$@"
}

cmd_start() {
	cmd_install
	local bin dir
	bin="$(pg_bin)"
	dir="$(state_dir)"
	mkdir -p "$ROOT/.engram"
	echo "$dir" >"$ROOT/.engram/location"
	if ! is_running; then
		mkdir -p "$dir/run"
		if [[ "$(id -u)" -eq 0 ]]; then chown -R postgres: "$dir"; fi
		if [[ ! -f "$dir/data/PG_VERSION" ]]; then
			log "initialising a cluster in $dir/data"
			as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
			write_conf "$dir"
		fi
		reserve_hugepages "$dir"
		log "starting PostgreSQL on 127.0.0.1:$PORT"
		# shellcheck disable=SC2046 # malloc_env's words are separate assignments
		as_owner env $(malloc_env) "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null ||
			die "PostgreSQL did not start; see $dir/postgres.log"
	fi
	ensure_roles
	log "PostgreSQL is running: $(url)"
}

# reserve_hugepages gives the cluster's shared memory 2 MB pages where this script may
# (root, a writable vm.nr_hugepages; ENGRAM_PG_HUGEPAGES=0 skips it). A backend pays a
# page fault the first time it touches each page of shared_buffers, and on the 2-core
# benchmark VMs a 4 kB fault cost 30-90 us: a new connection's first exact scan of an
# owner took 60-185 ms instead of 1-2 ms, and the resolver ran at 279 candidates/s
# instead of 452 (docs/perf-search.md, session 14). PostgreSQL's default huge_pages=try
# falls back to normal pages when the reservation falls short. stop releases the pages
# this script added.
reserve_hugepages() {
	local dir="$1" sb_mb want have
	[[ "${ENGRAM_PG_HUGEPAGES:-1}" != "0" ]] || return 0
	[[ "$(id -u)" -eq 0 && -w /proc/sys/vm/nr_hugepages ]] || return 0
	[[ "$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo)" == "2048" ]] || return 0
	sb_mb="$(sed -n 's/^shared_buffers = \([0-9]*\)MB$/\1/p' "$dir/data/postgresql.conf" | tail -n1)"
	[[ -n "$sb_mb" ]] || return 0
	# shared_buffers and the rest of the segment (about 1 % here), with room to spare.
	want=$(((sb_mb + sb_mb / 16 + 64) / 2))
	have="$(cat /proc/sys/vm/nr_hugepages)"
	((have >= want)) && return 0
	[[ -f "$dir/hugepages.before" ]] || echo "$have" >"$dir/hugepages.before"
	echo "$want" >/proc/sys/vm/nr_hugepages 2>/dev/null || return 0
	log "reserved $(cat /proc/sys/vm/nr_hugepages) huge pages of 2 MB for shared_buffers (ENGRAM_PG_HUGEPAGES=0 skips this)"
}

# malloc_env prints the environment the server starts with: glibc keeps the memory a
# backend frees for its next statement instead of handing it back to the kernel
# (ENGRAM_PG_MALLOC=0 prints nothing: glibc's defaults). By default a free of more than
# 128 kB (a sort's or hash's buffers, a materialised CTE) goes back to the kernel and the
# next statement faults those pages in anew; on the 2-core benchmark VMs a fault costs
# about 14 us: 90 keyword statements of the million-memory owner took 17.7 ms each and
# faulted 44,600 pages with the defaults, 13.2 ms and 15,100 pages with this
# (docs/perf-search.md, session 36). The price: a backend keeps the memory it freed, up
# to its own peak, until its connection ends.
malloc_env() {
	[[ "${ENGRAM_PG_MALLOC:-1}" != "0" ]] || return 0
	echo MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=134217728 MALLOC_TOP_PAD_=16777216
}

release_hugepages() {
	local dir="$1"
	[[ -f "$dir/hugepages.before" && -w /proc/sys/vm/nr_hugepages ]] || return 0
	cat "$dir/hugepages.before" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	rm -f "$dir/hugepages.before"
}

# write_conf sizes the cluster for the machine, as FACTS.md measured: with stock
# settings large index builds spill and run far slower.
write_conf() {
	local dir="$1" mem_kb sb_mb ecs_mb mwm_mb
	mem_kb="$(awk '/MemTotal/ {print $2}' /proc/meminfo 2>/dev/null || echo 4194304)"
	sb_mb=$((mem_kb / 1024 / 4))
	((sb_mb > 6144)) && sb_mb=6144
	((sb_mb < 128)) && sb_mb=128
	ecs_mb=$((mem_kb / 1024 * 2 / 3))
	mwm_mb=$((mem_kb / 1024 / 8))
	((mwm_mb > 4096)) && mwm_mb=4096
	((mwm_mb < 64)) && mwm_mb=64
	as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF

# engram project-local cluster
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$dir/run'
max_connections = 400
shared_buffers = ${sb_mb}MB
effective_cache_size = ${ecs_mb}MB
maintenance_work_mem = ${mwm_mb}MB
work_mem = 64MB
random_page_cost = 1.1
jit = off
max_wal_size = 4GB
checkpoint_timeout = 15min
log_min_messages = warning
EOF
	# Preloaded where the package ships them. pg_stat_statements: what the statements
	# cost is how the resolver's and the search's profiles are read (CREATE EXTENSION
	# pg_stat_statements as postgres, then SELECT … FROM pg_stat_statements).
	# pg_prewarm's autoprewarm: the buffers' list is saved every few minutes and read
	# back after a restart, so the first searches after one do not each fault their
	# owner's pages in (docs/perf-search.md, session 24).
	local libs=() lib
	for lib in pg_stat_statements pg_prewarm; do
		if [[ -f "$(pg_bin)/../lib/$lib.so" ]]; then
			libs+=("$lib")
		fi
	done
	if ((${#libs[@]} > 0)); then
		echo "shared_preload_libraries = '$(IFS=,; echo "${libs[*]}")'" | as_owner tee -a "$dir/data/postgresql.conf" >/dev/null
	fi
}

ensure_roles() {
	# Neither role is superuser or BYPASSRLS, so forced row-level security applies to
	# everything they run; only the owner could lift it, and the application is not the
	# owner. Created when missing, also on a cluster made before there were two roles.
	psql_admin -d postgres <<EOF
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$OWNER_ROLE') THEN
    CREATE ROLE $OWNER_ROLE LOGIN CREATEDB NOSUPERUSER NOBYPASSRLS NOCREATEROLE;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$APP_ROLE') THEN
    CREATE ROLE $APP_ROLE LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END
\$\$;
EOF
	# The owner drops the databases it made (the test harness's, one per test) even
	# while the application role's connections to them are still closing.
	psql_admin -d postgres -c "GRANT pg_signal_backend TO $OWNER_ROLE"
	if [[ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$APP_DB'")" != "1" ]]; then
		psql_admin -d postgres -c "CREATE DATABASE $APP_DB OWNER $OWNER_ROLE"
	fi
	# Extensions are created by the superuser in template1 and the app database, so
	# migrations (run as the owner role) and every cloned test database find them.
	# Under row-level security the planner may use a condition as an index condition only
	# when its operator is leakproof; full-text match (@@) is not marked so, which leaves
	# the per-user full-text indexes unused and every keyword search reading all of the
	# user's rows. It leaks nothing (a boolean of two values the caller already holds),
	# and only a superuser can say so: once per database, inherited by every clone.
	# pg_prewarm (contrib, in the server package): the maintenance pass reads the
	# owners' IVFFlat indexes into shared buffers, which their own scans never do
	# (memory/hnsw_prewarm.go).
	for db in template1 "$APP_DB"; do
		psql_admin -d "$db" -c "CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS btree_gin; CREATE EXTENSION IF NOT EXISTS pg_trgm;
			CREATE EXTENSION IF NOT EXISTS pg_prewarm;
			ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;"
	done
}

cmd_stop() {
	local bin dir
	bin="$(pg_bin)"
	dir="$(state_dir)"
	if is_running; then
		as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
		release_hugepages "$dir"
		log "stopped"
	else
		log "not running"
	fi
}

cmd_status() {
	local dir
	if [[ -z "$(pg_bin)" ]]; then
		echo "PostgreSQL: not installed"
		return 1
	fi
	dir="$(state_dir)"
	echo "PostgreSQL: $("$(pg_bin)/postgres" --version)"
	if have_pgvector; then echo "pgvector: installed"; else echo "pgvector: missing"; fi
	echo "data: $dir/data"
	if is_running; then
		echo "status: running on 127.0.0.1:$PORT"
		echo "url: $(url)"
	else
		echo "status: stopped"
		return 3
	fi
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
url) url ;;
owner-url) owner_url ;;
*)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
