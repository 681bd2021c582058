#!/bin/sh
# Starts the Temporal Web UI only where that is safe (docs/operations.md#reaching-the-operator-ports). The UI lists
# every turn, shows failure messages and can cancel, reset or terminate any turn, and Temporal's own sign-in is off
# unless configured. So:
#
# - published on the host's loopback only (AMY_UI_PUBLISHED_ON, the address compose publishes it on) and
#   reached there (TEMPORAL_UI_PUBLIC_URL, what browsers use, on loopback too): it starts as it is, write actions
#   on, so that an engineer reaching it through an SSH tunnel can Reset a failed turn;
# - published or reached beyond loopback: it starts only with OIDC sign-in configured (TEMPORAL_AUTH_ENABLED=true,
#   the provider, client id and secret, and an https callback URL), write actions on for whoever signed in.
#   Without sign-in it refuses to start: turning write actions off would still show every turn to anyone.
#
# Compose cannot make one setting depend on two others, so this script, mounted into the UI's container, decides,
# then hands over to the image's own entrypoint (AMY_UI_ENTRYPOINT; temporalio/ui's is
# /home/ui-server/start-ui-server.sh, which renders the TEMPORAL_* settings into its configuration) unchanged.
set -eu

entrypoint="${AMY_UI_ENTRYPOINT:-/home/ui-server/start-ui-server.sh}"

say() { echo "temporal-ui guard: $*" >&2; }
refuse() {
  say "$*"
  say 'not starting the Web UI (docs/operations.md#reaching-the-operator-ports)'
  exit 1
}

# An address or host name of this machine's loopback: 127.0.0.0/8, ::1 or localhost.
is_loopback() {
  case "$1" in
    localhost | ::1 | '[::1]') return 0 ;;
  esac
  echo "$1" | grep -Eq '^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$'
}

# The host of an http(s) URL: scheme://[user@]host[:port][/path], an IPv6 host in brackets.
host_of() {
  rest="${1#*://}"
  rest="${rest%%/*}"
  rest="${rest##*@}"
  case "$rest" in
    \[*) echo "${rest%%]*}]" ;;
    *) echo "${rest%%:*}" ;;
  esac
}

published="${AMY_UI_PUBLISHED_ON:-}"
public_url="${TEMPORAL_UI_PUBLIC_URL:-}"
[ -n "$published" ] || refuse 'AMY_UI_PUBLISHED_ON is not set: cannot tell where the Web UI is published'

exposed=''
is_loopback "$published" || exposed="it is published on $published (TEMPORAL_UI_BIND_ADDRESS), beyond the host's loopback"
if [ -z "$exposed" ] && [ -n "$public_url" ] && ! is_loopback "$(host_of "$public_url")"; then
  exposed="browsers reach it at $public_url (TEMPORAL_UI_PUBLIC_URL), beyond the host's loopback"
fi

if [ "${TEMPORAL_AUTH_ENABLED:-false}" = true ]; then
  missing=''
  for setting in TEMPORAL_AUTH_PROVIDER_URL TEMPORAL_AUTH_CLIENT_ID TEMPORAL_AUTH_CLIENT_SECRET TEMPORAL_AUTH_CALLBACK_URL; do
    eval "value=\${$setting:-}"
    [ -n "$value" ] || missing="$missing $setting"
  done
  [ -z "$missing" ] || refuse "TEMPORAL_AUTH_ENABLED=true but not set:$missing"
  if [ -n "$exposed" ]; then
    case "$TEMPORAL_AUTH_CALLBACK_URL" in
      https://*) ;;
      *) refuse "$exposed, and TEMPORAL_AUTH_CALLBACK_URL is not https: the sign-in would cross the network in the clear" ;;
    esac
  fi
  say "OIDC sign-in on (${TEMPORAL_AUTH_PROVIDER_URL}); write actions on for whoever signs in"
elif [ -n "$exposed" ]; then
  refuse "$exposed, without sign-in: anyone who reaches it could read every turn and cancel, reset or terminate it." \
    'Publish it on 127.0.0.1 and reach it through an SSH tunnel, or set TEMPORAL_AUTH_ENABLED=true with the' \
    'TEMPORAL_AUTH_* settings of your OIDC provider.'
else
  say "published on $published, the host's loopback only; write actions on"
fi

exec "$entrypoint" "$@"
