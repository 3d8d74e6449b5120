package reproduce

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"text/template"
)

// Files a plan writes for the engines that run its tasks, beside
// plan.json (docs/scale-out.md says how to submit them).
const (
	SlurmArrayFile  = "sweep.sbatch"  // the job array: one task per index
	SlurmGatherFile = "gather.sbatch" // the gather, after the array however it ended
	SlurmSubmitFile = "submit.sh"     // submits both, the gather depending on the array
	KubeJobFile     = "job.yaml"      // a Kubernetes Indexed Job
)

// EngineOptions shape the engines' files.
type EngineOptions struct {
	Cclab    string // the cclab binary, at the same path on every node
	Parallel int    // tasks at once (a Slurm array's %K, a Job's parallelism); 0: all
	Image    string // the container image for Kubernetes (cclab and the repository at the plan's root)
	Retries  int    // a Kubernetes index's retries (backoffLimitPerIndex)
}

var slurmArray = template.Must(template.New("array").Parse(`#!/bin/bash
# cclab sweep: one task of {{.Plan}} per array index ({{.Tasks}} tasks).
# Each task owns its node (--exclusive); a requeued task whose marker is
# written returns at once; on one kernel the tasks take turns (--wait on
# cclab's host lock).
#SBATCH --job-name=cclab-sweep
#SBATCH --array=0-{{.Last}}{{if .Parallel}}%{{.Parallel}}{{end}}
#SBATCH --exclusive
#SBATCH --requeue
#SBATCH --output={{.Logs}}/task-%a.log
exec {{.Cclab}} sweep run-one {{.Plan}} --index-from-env SLURM_ARRAY_TASK_ID --wait
`))

var slurmGather = template.Must(template.New("gather").Parse(`#!/bin/bash
# cclab sweep: pool every finished task of {{.Plan}} and write the results
# page; submitted with --dependency=afterany on the array, so it runs
# however the tasks ended and reports the missing and degraded ones.
#SBATCH --job-name=cclab-gather
#SBATCH --output={{.Logs}}/gather.log
exec {{.Cclab}} sweep gather {{.Plan}}
`))

var slurmSubmit = template.Must(template.New("submit").Parse(`#!/bin/bash
# Submits the sweep's job array, then its gather after it (afterany).
set -euo pipefail
array=$(sbatch --parsable {{.Dir}}/` + SlurmArrayFile + `)
gather=$(sbatch --parsable --dependency=afterany:${array%%;*} {{.Dir}}/` + SlurmGatherFile + `)
echo "array ${array%%;*}, gather ${gather%%;*}"
`))

var kubeJob = template.Must(template.New("job").Parse(`# cclab sweep as a Kubernetes Indexed Job: pod i runs task i of the plan
# (JOB_COMPLETION_INDEX); one pod per node (a run owns its kernel); the
# results volume holds the plan's directory at the same path on every
# pod. Gather afterwards: cclab sweep gather {{.Plan}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{.Name}}
  labels:
    app.kubernetes.io/name: cclab-sweep
spec:
  completionMode: Indexed
  completions: {{.Tasks}}
  parallelism: {{.Parallelism}}
  backoffLimitPerIndex: {{.Retries}}
  maxFailedIndexes: {{.Tasks}}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: cclab-sweep
        cclab.sweep: {{.Name}}
    spec:
      restartPolicy: Never
      hostNetwork: false
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchLabels:
                  cclab.sweep: {{.Name}}
              topologyKey: kubernetes.io/hostname
      containers:
        - name: run-one
          image: {{.Image}}
          command: [{{.Cclab}}, sweep, run-one, {{.Plan}}, --index-from-env, JOB_COMPLETION_INDEX, --wait]
          securityContext:
            privileged: true
          volumeMounts:
            - name: results
              mountPath: {{.Out}}
            - name: bpffs
              mountPath: /sys/fs/bpf
            - name: modules
              mountPath: /lib/modules
              readOnly: true
      volumes:
        - name: results
          persistentVolumeClaim:
            claimName: cclab-results
        - name: bpffs
          hostPath:
            path: /sys/fs/bpf
            type: DirectoryOrCreate
        - name: modules
          hostPath:
            path: /lib/modules
            type: Directory
`))

// WriteEngines writes the Slurm scripts and the Kubernetes Job for the
// plan into its directory.
func (p *Plan) WriteEngines(id string, opt EngineOptions) error {
	if len(p.Tasks) == 0 {
		return fmt.Errorf("the plan has no tasks")
	}
	par := opt.Parallel
	if par <= 0 || par > len(p.Tasks) {
		par = len(p.Tasks)
	}
	if opt.Image == "" {
		opt.Image = "cclab:" + shortRev(p.Revision)
	}
	if opt.Retries <= 0 {
		opt.Retries = 1
	}
	data := map[string]any{
		"Plan": strconv.Quote(filepath.Join(p.Out, PlanFile)), "Tasks": len(p.Tasks), "Last": len(p.Tasks) - 1,
		"Parallel": opt.Parallel, "Parallelism": par, "Logs": filepath.Join(p.Out, "logs"), "Dir": strconv.Quote(p.Out),
		"Cclab": strconv.Quote(opt.Cclab), "Out": p.Out, "Image": opt.Image, "Retries": opt.Retries,
		"Name": "cclab-sweep-" + id[:12],
	}
	for name, t := range map[string]*template.Template{SlurmArrayFile: slurmArray, SlurmGatherFile: slurmGather,
		SlurmSubmitFile: slurmSubmit, KubeJobFile: kubeJob} {
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := atomicWrite(filepath.Join(p.Out, name), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func shortRev(r string) string {
	if len(r) >= 12 {
		return r[:12]
	}
	if r == "" {
		return "devel"
	}
	return r
}
