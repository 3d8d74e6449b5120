package kubecheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// repo is the cclab repository, two levels up.
const repo = "../.."

// plan runs `cclab sweep plan` of the smoke experiment with three seeds
// and two at a time, and returns the plan's directory and its tasks.
func plan(t *testing.T) (string, int) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./cmd/cclab", "sweep", "plan", "smoke", "--seeds", "3", "--parallel", "2",
		"--out", out, "--root", ".", "--image", "registry.example/cclab:test", "--json")
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("cclab sweep plan: %v", err)
	}
	var p struct {
		Tasks []struct{ Index int } `json:"tasks"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, b)
	}
	return out, len(p.Tasks)
}

// The Job decodes strictly (no field the API does not have) and obeys
// the API server's rules for the fields it uses: an Indexed Job with a
// completion per task, a per-index backoff (which needs restartPolicy
// Never and at most 10^5 completions), at most that many failed indexes,
// valid names and labels, one pod per node, a privileged pod without the
// host's network, every mount a declared volume, and the task's index
// from JOB_COMPLETION_INDEX.
func TestJobManifest(t *testing.T) {
	out, tasks := plan(t)
	b, err := os.ReadFile(filepath.Join(out, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(b, &j); err != nil {
		t.Fatalf("job.yaml does not decode strictly into batch/v1 Job: %v", err)
	}
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Errorf("apiVersion %q kind %q", j.APIVersion, j.Kind)
	}
	// An Indexed Job's name goes into its pods' labels and hostnames.
	if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
		t.Errorf("name %q: %v", j.Name, errs)
	}
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || int(*s.Completions) != tasks {
		t.Errorf("completions %v, want %d tasks", s.Completions, tasks)
	}
	if s.Parallelism == nil || *s.Parallelism != 2 {
		t.Errorf("parallelism %v, want 2", s.Parallelism)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 0 {
		t.Fatalf("backoffLimitPerIndex %v", s.BackoffLimitPerIndex)
	}
	if *s.Completions > 100000 {
		t.Errorf("backoffLimitPerIndex allows at most 100000 completions")
	}
	if s.MaxFailedIndexes == nil || *s.MaxFailedIndexes > *s.Completions {
		t.Errorf("maxFailedIndexes %v above completions %d", s.MaxFailedIndexes, *s.Completions)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != "Never" {
		t.Errorf("restartPolicy %q: backoffLimitPerIndex needs Never", pod.RestartPolicy)
	}
	if pod.HostNetwork {
		t.Error("hostNetwork: a run builds its own namespaces")
	}
	for k, v := range s.Template.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("label %s=%s: %v", k, v, errs)
		}
	}
	aff := pod.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatal("no required pod anti-affinity: two runs could share a kernel")
	}
	term := aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector == nil {
		t.Errorf("anti-affinity %+v", term)
	} else {
		for k, v := range term.LabelSelector.MatchLabels {
			if s.Template.Labels[k] != v {
				t.Errorf("anti-affinity selects %s=%s, which the pods do not carry", k, v)
			}
		}
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 || c.Image != "registry.example/cclab:test" {
		t.Errorf("container %q image %q: %v", c.Name, c.Image, errs)
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Error("the pod must be privileged (namespaces, BPF, qdiscs)")
	}
	if i := slices.Index(c.Command, "--index-from-env"); i < 0 || i+1 >= len(c.Command) || c.Command[i+1] != "JOB_COMPLETION_INDEX" ||
		!slices.Contains(c.Command, "run-one") || !slices.Contains(c.Command, filepath.Join(out, "plan.json")) {
		t.Errorf("command %q", c.Command)
	}
	vols := map[string]bool{}
	for _, v := range pod.Volumes {
		vols[v.Name] = true
	}
	results := false
	for _, m := range c.VolumeMounts {
		if !vols[m.Name] {
			t.Errorf("mount %s: no such volume", m.Name)
		}
		results = results || (m.MountPath == out && m.Name == "results")
	}
	if !results {
		t.Errorf("the results volume is not mounted at the plan's directory %s", out)
	}
	if strings.Contains(string(b), "\t") {
		t.Error("tabs in YAML")
	}
}
