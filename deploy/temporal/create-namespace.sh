#!/bin/sh
# Registers the namespace the service uses (TEMPORAL_NAMESPACE) once the server answers; a namespace
# that exists is left as it is.
set -eu
ns="${TEMPORAL_NAMESPACE:-default}"
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done
temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$ns" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$ns" --retention "${TEMPORAL_RETENTION:-72h}"
echo "namespace $ns is ready"
