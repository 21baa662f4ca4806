package ember

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/rawtensor"
)

func init() {
	rawtensor.View = func(t any) backend.View { return t.(*Tensor).live("raw access").view() }
	rawtensor.Written = func(t any) {
		if tt := t.(*Tensor); tt.dev.Type != MetaType {
			tt.st.version.Add(1)
		}
	}
}
