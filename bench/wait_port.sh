# Sourced by the bench scripts: wait_port PORT waits (up to 20 s) until
# something accepts connections on 127.0.0.1:PORT, else exits with 1.
wait_port() {
  for _ in $(seq 200); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1).close()" \
      2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "$(basename "$0"): nothing listens on port $1" >&2
  exit 1
}
