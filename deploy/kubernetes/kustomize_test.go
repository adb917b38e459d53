// Package kubernetes_test renders engram's kustomizations and decodes every object
// strictly into the Kubernetes API types, so a typo in a manifest fails here rather
// than in a cluster. It is a test-only package: kustomize and k8s.io/api never reach
// the engram binary.
package kubernetes_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// object is a decoded manifest.
type object struct {
	kind, name string
	v          any
}

// newObject is the typed value for an apiVersion and kind; an unknown pair is an error.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + "/" + kind {
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1/Secret":
		return &corev1.Secret{}, nil
	case "v1/Service":
		return &corev1.Service{}, nil
	case "v1/Namespace":
		return &corev1.Namespace{}, nil
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, nil
	case "apps/v1/StatefulSet":
		return &appsv1.StatefulSet{}, nil
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "batch/v1/CronJob":
		return &batchv1.CronJob{}, nil
	}
	return nil, fmt.Errorf("no Go type for %s %s", apiVersion, kind)
}

func render(t *testing.T, dir string) map[string]object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := map[string]object{}
	for _, r := range rm.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		v, err := newObject(r.GetApiVersion(), r.GetKind())
		if err != nil {
			t.Errorf("%s: %v", r.CurId(), err)
			continue
		}
		// Strict: an unknown or duplicated field is an error, not silently dropped.
		if err := yaml.UnmarshalStrict(b, v); err != nil {
			t.Errorf("%s %s: %v", r.GetKind(), r.GetName(), err)
			continue
		}
		out[r.GetKind()+"/"+r.GetName()] = object{kind: r.GetKind(), name: r.GetName(), v: v}
	}
	return out
}

func TestBaseAndOverlayDecodeStrictly(t *testing.T) {
	for _, dir := range []string{"base", "overlays/example"} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			for _, want := range []string{"Deployment/engram-api", "Service/engram-api", "PodDisruptionBudget/engram-api",
				"HorizontalPodAutoscaler/engram-api", "Deployment/engram-extractor", "Deployment/engram-resolver",
				"StatefulSet/nats", "Service/nats", "ConfigMap/engram"} {
				if _, ok := objs[want]; !ok {
					t.Errorf("%s is missing", want)
				}
			}
			cm := objs["ConfigMap/engram"].v.(*corev1.ConfigMap)
			if cm.Data["ENGRAM_STREAM_REPLICAS"] != "3" {
				t.Errorf("ENGRAM_STREAM_REPLICAS = %q, want 3", cm.Data["ENGRAM_STREAM_REPLICAS"])
			}
			nats := objs["StatefulSet/nats"].v.(*appsv1.StatefulSet)
			if nats.Spec.Replicas == nil || *nats.Spec.Replicas != 3 || len(nats.Spec.VolumeClaimTemplates) != 1 {
				t.Errorf("NATS: want 3 replicas with a volume claim each")
			}
			for _, name := range []string{"engram-api", "engram-extractor", "engram-resolver"} {
				o, ok := objs["Deployment/"+name]
				if !ok {
					continue
				}
				checkEngramPod(t, name, o.v.(*appsv1.Deployment).Spec.Template.Spec)
			}
		})
	}
}

// checkEngramPod: probes on /healthz and /readyz, resources, non-root, and the
// tokens from a Secret rather than a literal.
func checkEngramPod(t *testing.T, name string, spec corev1.PodSpec) {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers", name, len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("%s: liveness probe is not GET /healthz", name)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("%s: readiness probe is not GET /readyz", name)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: no CPU request or memory limit", name)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: not runAsNonRoot", name)
	}
	secret := false
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil && strings.HasPrefix(e.SecretRef.Name, "engram") {
			secret = true
		}
	}
	for _, e := range c.Env {
		if e.Name == "ENGRAM_TOKENS" || e.Name == "ENGRAM_DATABASE_URL" {
			t.Errorf("%s: %s set as a literal; it belongs in the Secret", name, e.Name)
		}
	}
	if !secret {
		t.Errorf("%s: no envFrom secretRef engram", name)
	}
}

// TestUnknownFieldFails: the decoding is strict, so a misspelt field is caught.
func TestUnknownFieldFails(t *testing.T) {
	bad := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n")
	if err := yaml.UnmarshalStrict(bad, &appsv1.Deployment{}); err == nil {
		t.Fatal("a misspelt field (replica) decoded without error")
	}
}
