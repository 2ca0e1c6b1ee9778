"""Operations: structured logs without secrets, Prometheus metrics, health and readiness."""
