#!/usr/bin/env bash
# Starts the local services the tests use, when they are installed but stopped.
# PostgreSQL and RabbitMQ are started if present; nothing here downloads anything.
set -u
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
  fi
fi
# RabbitMQ: the node started if it is down, and its app if a broker-wide test left it stopped.
if command -v rabbitmqctl >/dev/null 2>&1 && command -v rabbitmq-server >/dev/null 2>&1; then
  if ! rabbitmqctl -q ping >/dev/null 2>&1; then
    rabbitmq-server -detached >/dev/null 2>&1 || service rabbitmq-server start >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do rabbitmqctl -q ping >/dev/null 2>&1 && break; sleep 1; done
  fi
  rabbitmqctl -q start_app >/dev/null 2>&1 || true
  rabbitmqctl -q await_startup >/dev/null 2>&1 || true
fi
exit 0
