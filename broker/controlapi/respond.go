package controlapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/berth-dev/berth/api"
)

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// WriteError answers with err as an api.ErrorBody: its status and code
// when it is an *api.Error, else 500 and api.CodeInternal.
func WriteError(w http.ResponseWriter, err error) {
	e := api.AsError(err)
	WriteJSON(w, e.Status, api.ErrorBody{Error: e.Message, Code: e.Code})
}

// DecodeJSON reads a size-limited JSON body into v; unknown fields and
// trailing data are errors (api.CodeBadRequest, api.CodeBodyTooLarge).
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, api.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		if errors.Is(err, io.EOF) {
			return api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "request body is empty: send a JSON object")
		}
		return api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "malformed JSON body: %v", err)
	}
	if dec.More() {
		return api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "malformed JSON body: trailing data after the object")
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
	}
	return nil
}

func tooLarge() error {
	return api.Errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "request body is over %d bytes", api.MaxBodyBytes)
}
