package devstack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// AdminClient calls the gateway's admin API.
type AdminClient struct {
	BaseURL    string
	AdminToken string
	HTTP       *http.Client
}

type createCompanyResponse struct {
	Company Company `json:"company"`
	Keys    APIKeys `json:"keys"`
}

// CreateCompany creates a company through POST /api/v1/admin/companies.
func (a AdminClient) CreateCompany(ctx context.Context, name string) (Company, APIKeys, error) {
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return Company{}, APIKeys{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.BaseURL+"/api/v1/admin/companies", bytes.NewReader(body))
	if err != nil {
		return Company{}, APIKeys{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", randomHex(16))
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return Company{}, APIKeys{}, fmt.Errorf("creating company: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return Company{}, APIKeys{}, fmt.Errorf("creating company: gateway answered %s", describe(resp))
	}
	var out createCompanyResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Company{}, APIKeys{}, fmt.Errorf("creating company: reading answer: %w", err)
	}
	if out.Company.ID == "" || out.Keys.SKTest == "" {
		return Company{}, APIKeys{}, fmt.Errorf("creating company: answer lacks the company id or keys")
	}
	return out.Company, out.Keys, nil
}

// KeyKnown reports whether the gateway accepts a secret key (GET /api/v1/management/whoami).
// Only a 401 says no: any other answer keeps the key, so a gateway without that route yet
// does not make the stack create a company on every start.
func (a AdminClient) KeyKnown(ctx context.Context, secretKey string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.BaseURL+"/api/v1/management/whoami", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+secretKey)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return false, fmt.Errorf("checking the demo company's key: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode != http.StatusUnauthorized, nil
}

// EnsureCompany makes creds name a demo company the gateway knows: it keeps the one
// creds has when its secret key still works, else creates one named name.
func EnsureCompany(ctx context.Context, a AdminClient, creds *Credentials, name string, log *slog.Logger) error {
	if creds.Company != nil && creds.Keys != nil {
		known, err := a.KeyKnown(ctx, creds.Keys.SKTest)
		if err != nil {
			return err
		}
		if known {
			return nil
		}
		log.Warn("the gateway does not know the demo company of the credentials file (new database?): creating another",
			"old_company", creds.Company.ID)
	}
	company, keys, err := a.CreateCompany(ctx, name)
	if err != nil {
		return err
	}
	creds.Company, creds.Keys = &company, &keys
	log.Info("created demo company", "id", company.ID, "name", company.Name)
	return nil
}

func describe(resp *http.Response) string {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return strings.TrimSpace(resp.Status + " " + string(body))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
