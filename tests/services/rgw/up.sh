#!/bin/bash
# Single-node throwaway Ceph (1 mon, 1 memstore OSD, no mgr, auth none) + radosgw: a real S3 with
# SigV4 checking on 127.0.0.1:PORT, user AKTEST/SKTEST (test-only credentials).
# Adapted from ../shared/infra/rgw-up.sh: every daemon runs in the foreground (-f) as a child of
# the caller, whose pids are appended to rgw.pids so tests/services/with-services.sh stops them.
# Sourced (not run) by tests/services/with-services.sh: `source up.sh DIR [PORT]`; returns 1 on failure.
# Packages: ceph-mon ceph-osd radosgw.
D=${1:-${TMPDIR:-/tmp}/vforge-ceph}; PORT=${2:-7480}
rm -rf "$D"; mkdir -p "$D"/{run,log,mon.a,osd.0,rgw}
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > "$D/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:6789
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
pid file = $D/run/\$name.pid
ms bind ipv6 = false
public addr = 127.0.0.1
cluster addr = 127.0.0.1
[mon]
mon data = $D/mon.\$id
mon data avail crit = 1
[osd]
osd data = $D/osd.\$id
osd objectstore = memstore
memstore device bytes = 2147483648
osd max object name len = 460
osd max object namespace len = 64
osd crush update on start = false
osd class update on start = false
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw data = $D/rgw
EOF
C="-c $D/ceph.conf"
monmaptool --create --add a v1:127.0.0.1:6789 --fsid "$FSID" "$D/monmap" >/dev/null || return 1
ceph-mon $C --mkfs -i a --monmap "$D/monmap" || return 1
ceph-mon $C -i a -f >"$D/log/mon.out" 2>&1 & echo $! >>"$D/rgw.pids"
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ID=$(timeout 60 ceph $C osd create "$OSD_UUID") || return 1
ceph-osd $C -i "$ID" --mkfs --osd-uuid "$OSD_UUID" 2>/dev/null || return 1
vf_retry ceph $C osd crush add osd.$ID 1.0 root=default host=localhost || return 1  # creates the host bucket
ceph-osd $C -i "$ID" -f >"$D/log/osd.out" 2>&1 & echo $! >>"$D/rgw.pids"
radosgw $C -n client.rgw -f >"$D/log/rgw.out" 2>&1 & echo $! >>"$D/rgw.pids"
for i in $(seq 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.5; done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/" || { echo "radosgw did not come up" >&2; tail -5 "$D"/log/*.out >&2; return 1; }
vf_retry radosgw-admin $C -n client.rgw user create --uid=test --display-name=test --access-key=AKTEST --secret-key=SKTEST || return 1
echo "services: rgw (S3) up on 127.0.0.1:$PORT" >&2
