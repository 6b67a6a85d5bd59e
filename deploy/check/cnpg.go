package check

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CNPGCluster is CloudNativePG's Cluster (postgresql.cnpg.io/v1), the fields this project may
// set. The operator's own Go API (github.com/cloudnative-pg/api) is not served by the module
// proxy this project builds from, so the subset is written here from the operator's API
// reference (https://cloudnative-pg.io/documentation/current/cloudnative-pg.v1/), field names
// and nesting as they are there. A field outside it fails the check like a misspelled one:
// adding a CNPG feature to the manifest means adding its field here, checked against that
// reference.
type CNPGCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CNPGClusterSpec `json:"spec"`
}

// CNPGClusterSpec is the Cluster's spec.
type CNPGClusterSpec struct {
	Description           string                      `json:"description,omitempty"`
	Instances             int                         `json:"instances"`
	ImageName             string                      `json:"imageName,omitempty"`
	PrimaryUpdateStrategy string                      `json:"primaryUpdateStrategy,omitempty"`
	PrimaryUpdateMethod   string                      `json:"primaryUpdateMethod,omitempty"`
	EnableSuperuserAccess *bool                       `json:"enableSuperuserAccess,omitempty"`
	SuperuserSecret       *CNPGLocalObjectReference   `json:"superuserSecret,omitempty"`
	Bootstrap             *CNPGBootstrap              `json:"bootstrap,omitempty"`
	PostgreSQL            *CNPGPostgresConfiguration  `json:"postgresql,omitempty"`
	Affinity              *CNPGAffinity               `json:"affinity,omitempty"`
	Storage               *CNPGStorage                `json:"storage,omitempty"`
	WALStorage            *CNPGStorage                `json:"walStorage,omitempty"`
	Resources             corev1.ResourceRequirements `json:"resources,omitempty"`
	Monitoring            *CNPGMonitoring             `json:"monitoring,omitempty"`
	Managed               *CNPGManaged                `json:"managed,omitempty"`
	Certificates          *CNPGCertificates           `json:"certificates,omitempty"`
}

// CNPGLocalObjectReference names a Secret or ConfigMap of the namespace.
type CNPGLocalObjectReference struct {
	Name string `json:"name"`
}

// CNPGBootstrap is spec.bootstrap (only initdb is used here).
type CNPGBootstrap struct {
	InitDB *CNPGInitDB `json:"initdb,omitempty"`
}

// CNPGInitDB is spec.bootstrap.initdb.
type CNPGInitDB struct {
	Database               string                    `json:"database,omitempty"`
	Owner                  string                    `json:"owner,omitempty"`
	Secret                 *CNPGLocalObjectReference `json:"secret,omitempty"`
	PostInitSQL            []string                  `json:"postInitSQL,omitempty"`
	PostInitApplicationSQL []string                  `json:"postInitApplicationSQL,omitempty"`
	PostInitTemplateSQL    []string                  `json:"postInitTemplateSQL,omitempty"`
	DataChecksums          *bool                     `json:"dataChecksums,omitempty"`
	Encoding               string                    `json:"encoding,omitempty"`
	LocaleCollate          string                    `json:"localeCollate,omitempty"`
	LocaleCType            string                    `json:"localeCType,omitempty"`
}

// CNPGPostgresConfiguration is spec.postgresql.
type CNPGPostgresConfiguration struct {
	Parameters  map[string]string `json:"parameters,omitempty"`
	PgHBA       []string          `json:"pg_hba,omitempty"`
	Synchronous *CNPGSynchronous  `json:"synchronous,omitempty"`
}

// CNPGSynchronous is spec.postgresql.synchronous (quorum or priority synchronous replication).
type CNPGSynchronous struct {
	Method         string `json:"method"`
	Number         int    `json:"number"`
	MaxStandbyName int    `json:"maxStandbyNamesFromCluster,omitempty"`
	DataDurability string `json:"dataDurability,omitempty"`
}

// CNPGAffinity is spec.affinity.
type CNPGAffinity struct {
	EnablePodAntiAffinity *bool             `json:"enablePodAntiAffinity,omitempty"`
	TopologyKey           string            `json:"topologyKey,omitempty"`
	PodAntiAffinityType   string            `json:"podAntiAffinityType,omitempty"`
	NodeSelector          map[string]string `json:"nodeSelector,omitempty"`
}

// CNPGStorage is spec.storage and spec.walStorage.
type CNPGStorage struct {
	Size         string  `json:"size,omitempty"`
	StorageClass *string `json:"storageClass,omitempty"`
	ResizeInUse  *bool   `json:"resizeInUseVolumes,omitempty"`
}

// CNPGMonitoring is spec.monitoring.
type CNPGMonitoring struct {
	EnablePodMonitor bool `json:"enablePodMonitor,omitempty"`
}

// CNPGManaged is spec.managed: roles the operator keeps as declared.
type CNPGManaged struct {
	Roles []CNPGRole `json:"roles,omitempty"`
}

// CNPGRole is one of spec.managed.roles.
type CNPGRole struct {
	Name            string                    `json:"name"`
	Comment         string                    `json:"comment,omitempty"`
	Ensure          string                    `json:"ensure,omitempty"`
	Login           bool                      `json:"login,omitempty"`
	Superuser       bool                      `json:"superuser,omitempty"`
	CreateDB        bool                      `json:"createdb,omitempty"`
	CreateRole      bool                      `json:"createrole,omitempty"`
	Inherit         *bool                     `json:"inherit,omitempty"`
	Replication     bool                      `json:"replication,omitempty"`
	BypassRLS       bool                      `json:"bypassrls,omitempty"`
	ConnectionLimit *int64                    `json:"connectionLimit,omitempty"`
	PasswordSecret  *CNPGLocalObjectReference `json:"passwordSecret,omitempty"`
	DisablePassword bool                      `json:"disablePassword,omitempty"`
	ValidUntil      string                    `json:"validUntil,omitempty"`
	InRoles         []string                  `json:"inRoles,omitempty"`
}

// CNPGCertificates is spec.certificates (server and client CA secrets).
type CNPGCertificates struct {
	ServerCASecret       string   `json:"serverCASecret,omitempty"`
	ServerTLSSecret      string   `json:"serverTLSSecret,omitempty"`
	ClientCASecret       string   `json:"clientCASecret,omitempty"`
	ReplicationTLSSecret string   `json:"replicationTLSSecret,omitempty"`
	ServerAltDNSNames    []string `json:"serverAltDNSNames,omitempty"`
}
