// Package embeddings is a client of an OpenAI-compatible embeddings API
// (POST <url>/v1/embeddings, as Ollama, llama.cpp's server and LM Studio
// serve it): the embedder of standards search, when the user's broker
// config names one (search.embeddings).
package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxResponseBytes bounds what one answer may hold (a batch of 32 vectors
// of 4,096 numbers in JSON is about 3 MB).
const maxResponseBytes = 64 << 20

// Client asks one server for the vectors of one model.
type Client struct {
	endpoint string
	model    string
	http     *http.Client
}

// New returns a client of the server at url (its base, such as
// http://127.0.0.1:11434; "/v1/embeddings" is added unless url already ends
// with it) for model. hc nil means http.DefaultClient.
func New(url, model string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	endpoint := strings.TrimRight(url, "/")
	if !strings.HasSuffix(endpoint, "/v1/embeddings") {
		endpoint += "/v1/embeddings"
	}
	return &Client{endpoint: endpoint, model: model, http: hc}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// Embed returns one vector per text, in order, all of one dimension.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": c.model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings request to %s: %w", c.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings request to %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", c.endpoint, err)
	}
	if len(raw) > maxResponseBytes {
		return nil, fmt.Errorf("%s answered more than %d bytes", c.endpoint, maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s: %s", c.endpoint, resp.Status, bytes.TrimSpace(raw[:min(len(raw), 200)]))
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the answer of %s is not an embeddings list: %w", c.endpoint, err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("%s returned %d vectors for %d texts", c.endpoint, len(out.Data), len(texts))
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("%s returned a vector for text %d of %d, or twice", c.endpoint, d.Index, len(texts))
		}
		vecs[d.Index] = d.Embedding
	}
	for _, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			return nil, errors.New("the embedding server returned vectors of different or zero dimensions")
		}
	}
	return vecs, nil
}
