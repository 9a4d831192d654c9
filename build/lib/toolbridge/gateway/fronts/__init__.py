"""Fronts: one translator per client API, between its wire format and the pipeline's turn and
events (``toolbridge.gateway.pipeline``)."""
