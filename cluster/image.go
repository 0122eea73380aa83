package cluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// ImageFile is one file of an image's single layer.
type ImageFile struct {
	Path string // inside the image, without the leading '/'
	Mode int64
	Data []byte
}

// Image describes a FROM-scratch image: one layer of files and an entrypoint.
type Image struct {
	// Ref is the image's name with its tag ("streamsim-plan:dev"); containerd stores it
	// as docker.io/library/streamsim-plan:dev, which is what a pod's "streamsim-plan:dev"
	// resolves to.
	Ref        string
	Entrypoint []string
	Files      []ImageFile
}

// epoch is every file's and the image's time, so the same files give the same image digest.
var epoch = time.Unix(0, 0).UTC()

// WriteArchive writes img as a Docker image archive (manifest.json, config, one layer.tar),
// the format `ctr images import` and `docker load` read. No registry or Docker engine is
// involved.
func WriteArchive(w io.Writer, img Image) error {
	if img.Ref == "" || len(img.Entrypoint) == 0 || len(img.Files) == 0 {
		return fmt.Errorf("image: a name, an entrypoint and at least one file are needed")
	}
	var layer bytes.Buffer
	lt := tar.NewWriter(&layer)
	dirs := map[string]bool{}
	for _, f := range img.Files {
		// Parent directories first (a layer without them unpacks, but tools expect them).
		for i := 0; i < len(f.Path); i++ {
			if f.Path[i] == '/' && !dirs[f.Path[:i]] {
				dirs[f.Path[:i]] = true
				if err := lt.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.Path[:i] + "/", Mode: 0o755, ModTime: epoch}); err != nil {
					return fmt.Errorf("image layer: %w", err)
				}
			}
		}
		if err := lt.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: epoch}); err != nil {
			return fmt.Errorf("image layer: %w", err)
		}
		if _, err := lt.Write(f.Data); err != nil {
			return fmt.Errorf("image layer: %w", err)
		}
	}
	// An empty /tmp: the SDK's temp path, mounted over by the pod's emptyDir.
	if err := lt.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: epoch}); err != nil {
		return fmt.Errorf("image layer: %w", err)
	}
	if err := lt.Close(); err != nil {
		return fmt.Errorf("image layer: %w", err)
	}
	layerSum := sha256.Sum256(layer.Bytes())
	layerHex := hex.EncodeToString(layerSum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": img.Entrypoint,
			"Env":        []string{"PATH=/"},
			"WorkingDir": "/",
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerHex}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "streamsim k8s image"}},
	})
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := layerHex + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{img.Ref}, "Layers": []string{layerName},
	}})
	if err != nil {
		return fmt.Errorf("image manifest: %w", err)
	}
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerName, layer.Bytes()}, {"manifest.json", manifest}} {
		if len(e.name) > len(layerHex) && e.name[:len(layerHex)] == layerHex && e.name != configName {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: layerHex + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return fmt.Errorf("image archive: %w", err)
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: epoch}); err != nil {
			return fmt.Errorf("image archive: %w", err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("image archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	return nil
}

// WriteArchiveFile writes the archive of a one-binary image: the file at binary becomes
// /<name> and the entrypoint.
func WriteArchiveFile(path, ref, binary, name string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("image binary: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	if err := WriteArchive(f, Image{Ref: ref, Entrypoint: []string{"/" + name}, Files: []ImageFile{{Path: name, Mode: 0o755, Data: data}}}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
