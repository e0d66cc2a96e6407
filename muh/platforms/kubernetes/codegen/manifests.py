"""Emitter `kubernetes`: the plan's server as a Deployment and a Service, and the image they run.

``Dockerfile`` (the image every container platform builds: muh/codegen/start), ``image/start.sh`` (the same start
script), ``kubernetes/deployment.yaml`` and ``kubernetes/service.yaml``. The container runs the start script with
the server's argv (every flag visible in the Deployment), requests the cards as its vendor's device-plugin resource
(the launch's device count: the tensor-parallel size), mounts the model's claim read-only where the server reads
it, and is probed on the server's health endpoint: a startup probe for the load, then readiness and liveness.
Objects are written with PyYAML (sorted keys: the same spec gives the same bytes) and validated against
Kubernetes' own schemas in the tests (kubernetes-validate)."""

from __future__ import annotations

import re

import yaml

from muh import platforms
from muh.codegen import start
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.probe.image import probe_bundle, probe_step
from muh.diagnostics import Diagnostic, Severity
from muh.platforms.base import PlatformFacts

NAME = "kubernetes"
DEPLOYMENT = "kubernetes/deployment.yaml"
SERVICE = "kubernetes/service.yaml"
PERIOD_S = 10


def dns_name(text: str) -> str:
    """A DNS-1123 label from a deploy block's name (lower case, ``-`` for anything else, ≤ 63 characters)."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-") or "muh"


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:  # the labels are written out each time, never as &anchors
        return True


def _dump(header: str, obj: dict) -> str:
    return f"# {header}\n" + yaml.dump(
        obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True
    )


def objects(ctx: BuildContext, plan, f: PlatformFacts) -> tuple[dict, dict]:
    """(Deployment, Service) of the plan's launch."""
    launch = plan.launch
    name = dns_name(f"muh-{plan.deploy}")
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "muh"}
    vendor = ctx.spec.hardware[plan.hardware].vendor if plan.hardware in ctx.spec.hardware else "nvidia"
    resource = f.gpu_resources.get(vendor)
    if resource is None:
        ctx.diagnostics.append(
            Diagnostic(
                "W-DEPLOY-PLATFORM",
                f"the kubernetes platform knows no device-plugin resource for `{vendor}` cards: the "
                "Deployment requests none",
                None,
                severity=Severity.warning,
            )
        )
    cmd = start.command(launch)
    probe = {"httpGet": {"path": launch.health, "port": "http"}, "periodSeconds": PERIOD_S}
    container = {
        "name": "server",
        "image": f"{name}:{ctx.spec.sha256[:12]}",
        "imagePullPolicy": "IfNotPresent",
        "command": cmd[:2] if launch.script else cmd[:1],
        "args": cmd[2:] if launch.script else cmd[1:],
        "env": [{"name": k, "value": v} for k, v in launch.env],
        "ports": [{"name": "http", "containerPort": launch.port, "protocol": "TCP"}],
        "resources": {"limits": {resource: launch.gpus}} if resource else {},
        "volumeMounts": [
            {"name": "model", "mountPath": launch.model, "readOnly": True},
            {"name": "shm", "mountPath": "/dev/shm"},
        ],
        "startupProbe": {**probe, "failureThreshold": -(-int(f.start_seconds or 600) // PERIOD_S)},
        "readinessProbe": {**probe, "failureThreshold": 3},
        "livenessProbe": {**probe, "failureThreshold": 6},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "Recreate"},  # the cards are held by the running pod: a new one starts after it
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [container],
                    "volumes": [
                        {
                            "name": "model",
                            "persistentVolumeClaim": {
                                "claimName": (f.model_claim or "{name}-model").format(name=name),
                                "readOnly": True,
                            },
                        },
                        {"name": "shm", "emptyDir": {"medium": "Memory"}},
                    ],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "type": "ClusterIP",
            "selector": labels,
            "ports": [{"name": "http", "port": launch.port, "targetPort": "http", "protocol": "TCP"}],
        },
    }
    return deployment, service


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    plan = ctx.derived.deploy
    if plan is None or plan.launch is None or plan.platform != NAME:
        return []
    f = platforms.get(NAME).facts
    deployment, service = objects(ctx, plan, f)
    probe, probe_files = probe_bundle(ctx)
    steps = plan.launch.steps + ((probe_step(),) if probe else ())
    files = [
        GeneratedFile("Dockerfile", start.dockerfile(ctx, plan, probe, purpose="Kubernetes")),
        GeneratedFile(DEPLOYMENT, _dump(ctx.header_text(), deployment)),
        GeneratedFile(SERVICE, _dump(ctx.header_text(), service)),
    ]
    if plan.launch.script:
        files.append(GeneratedFile(start.PATH, start.script(plan.launch, ctx.header_text(), steps), executable=True))
    return files + probe_files
