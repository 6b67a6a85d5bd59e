package natsauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"
)

// Keys are the users' NKeys kept in a directory: one seed file per user (<user>.nk, mode 0600),
// the file a process is given as NATS_CREDS.
type Keys struct {
	Dir string
	// Public is each user's public key (what the server's configuration names).
	Public map[string]string
}

// SeedFile is the path of user's seed file.
func (k Keys) SeedFile(user string) string { return filepath.Join(k.Dir, user+".nk") }

// EnsureKeys returns the keys kept in dir, generating (and saving) the seed of every user of
// Users that has none yet. dir is created 0700.
func EnsureKeys(dir string) (Keys, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Keys{}, err
	}
	k := Keys{Dir: dir, Public: map[string]string{}}
	for _, name := range Names() {
		pub, err := ensureSeed(k.SeedFile(name))
		if err != nil {
			return Keys{}, fmt.Errorf("nkey of %s: %w", name, err)
		}
		k.Public[name] = pub
	}
	return k, nil
}

// ensureSeed reads the user seed in path, or creates one there, and returns its public key.
func ensureSeed(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return "", err
		}
		seed, err := kp.Seed()
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
			return "", err
		}
		return kp.PublicKey()
	}
	if err != nil {
		return "", err
	}
	return PublicKeyOf(data)
}

// PublicKeyOf returns the public key of a user seed (a seed file's contents).
func PublicKeyOf(seed []byte) (string, error) {
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return "", err
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", err
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return "", errors.New("not a user seed (it must start with SU)")
	}
	return pub, nil
}

// LoadKeys returns the keys kept in dir without generating any: for a NATS server that
// already knows its users, a missing seed is an error.
func LoadKeys(dir string) (Keys, error) {
	k := Keys{Dir: dir, Public: map[string]string{}}
	for _, name := range Names() {
		data, err := os.ReadFile(k.SeedFile(name))
		if err != nil {
			return Keys{}, fmt.Errorf("nkey of %s: %w", name, err)
		}
		if k.Public[name], err = PublicKeyOf(data); err != nil {
			return Keys{}, fmt.Errorf("nkey of %s (%s): %w", name, k.SeedFile(name), err)
		}
	}
	return k, nil
}
