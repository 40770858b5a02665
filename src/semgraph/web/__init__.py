"""Webhooks and the HTTP API."""
