"""Platform `kubernetes`: the same server where a user outgrows the competition's one box — a Deployment (the
image every container platform builds, started by the same start script; the cards as the device plugin's
resource, the model's weights from a volume, readiness and liveness on the server's health endpoint) and a
Service in front of it (facts: ``platform.json``)."""
