package check

import (
	"fmt"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Object is one rendered Kubernetes object, decoded into its Go type.
type Object struct {
	APIVersion, Kind, Name string
	// Value is a pointer to the typed object: *appsv1.Deployment, *corev1.ConfigMap, ...
	Value any
}

// ID names the object in messages: "Deployment/gateway".
func (o Object) ID() string { return o.Kind + "/" + o.Name }

// kinds are the types the manifests may use, by apiVersion and kind. An object of any other
// type is refused: adding one means adding its Go type here, so that it is checked too.
var kinds = map[string]func() any{
	"v1/ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                          func() any { return &corev1.Secret{} },
	"v1/Service":                         func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                  func() any { return &corev1.ServiceAccount{} },
	"v1/Namespace":                       func() any { return &corev1.Namespace{} },
	"apps/v1/Deployment":                 func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                func() any { return &appsv1.StatefulSet{} },
	"batch/v1/CronJob":                   func() any { return &batchv1.CronJob{} },
	"batch/v1/Job":                       func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":      func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
	"rbac.authorization.k8s.io/v1/Role":  func() any { return &rbacv1.Role{} },
	"postgresql.cnpg.io/v1/Cluster":      func() any { return &CNPGCluster{} },
}

// Render builds the kustomization in dir with the kustomize Go API (what `kubectl apply -k`
// does) and decodes every object strictly (Decode).
func Render(dir string) ([]Object, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize: %w", filepath.Base(dir), err)
	}
	var objs []Object
	var errs []error
	for _, r := range m.Resources() {
		raw, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		o, err := Decode(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s/%s: %w", filepath.Base(dir), r.GetKind(), r.GetName(), err))
			continue
		}
		objs = append(objs, o)
	}
	if len(errs) > 0 {
		return objs, joinErrors(errs)
	}
	return objs, nil
}

// Decode reads one object into its Go type, refusing unknown and misspelled fields (at any
// depth) and types that kinds does not list.
func Decode(raw []byte) (Object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return Object{}, err
	}
	o := Object{APIVersion: head.APIVersion, Kind: head.Kind, Name: head.Metadata.Name}
	make, ok := kinds[head.APIVersion+"/"+head.Kind]
	if !ok {
		return o, fmt.Errorf("%s %s is not a type the check knows (add it to kinds)", head.APIVersion, head.Kind)
	}
	o.Value = make()
	// As the API server decodes: duplicate keys refused, field names matched case-sensitively
	// (encoding/json would take readOnlyRootFileSystem for readOnlyRootFilesystem), unknown
	// fields reported with their path.
	data, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return o, err
	}
	strict, err := kjson.UnmarshalStrict(data, o.Value, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return o, err
	}
	return o, joinErrors(strict)
}

// Find returns the object of kind and name, or nil.
func Find[T any](objs []Object, kind, name string) *T {
	for _, o := range objs {
		if o.Kind == kind && o.Name == name {
			if v, ok := o.Value.(*T); ok {
				return v
			}
		}
	}
	return nil
}
