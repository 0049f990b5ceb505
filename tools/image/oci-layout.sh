# The OCI image layout of a one-layer image, written as a tarball that
# `ctr images import` takes (image-layout spec: oci-layout, index.json,
# blobs/sha256/<digest>); no registry. Shared by tools/image/build-image.sh
# (the cpusetd image) and tests/containerd/lib.sh (the tests' busybox
# image). Source it; needs jq, sha256sum, tar.

# oci_layout TARBALL NAME ARCH CONFIG LAYER LAYER_MEDIA_TYPE [ANNOTATIONS]
#   CONFIG  the image config JSON file; its rootfs.diff_ids must already
#           name the uncompressed layer's digest
#   LAYER   the layer as it goes in (a tar, or a gzip'd tar with
#           LAYER_MEDIA_TYPE ...tar+gzip)
#   ANNOTATIONS  a JSON object for the manifest's annotations (default {})
# CONFIG and LAYER are moved into the layout. NAME is the full image name
# (io.containerd.image.name); its tag is the ref.name. Returns non-zero
# when a step fails (TARBALL is then not written).
oci_layout() {
	local out=$1 name=$2 arch=$3 config=$4 layer=$5 ltype=$6 annot=${7:-'{}'}
	local dir ld ls cd cs md ms r

	dir=$(mktemp -d "$out.layout.XXXXXX") || return 1
	mkdir -p "$dir/blobs/sha256"
	# blob FILE: into blobs/sha256 under its digest; prints "<digest> <size>".
	blob() {
		local d s
		d=$(sha256sum "$1" | cut -d' ' -f1) && s=$(stat -c %s "$1") &&
			mv "$1" "$dir/blobs/sha256/$d" && echo "$d $s"
	}
	read -r ld ls < <(blob "$layer") && read -r cd cs < <(blob "$config") &&
		jq -n --arg c "sha256:$cd" --argjson cs "$cs" --arg l "sha256:$ld" --argjson ls "$ls" \
			--arg lt "$ltype" --argjson a "$annot" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
			config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
			layers: [{mediaType: $lt, digest: $l, size: $ls}],
			annotations: $a
		}' >"$dir/manifest.json" &&
		read -r md ms < <(blob "$dir/manifest.json") &&
		jq -n --arg m "sha256:$md" --argjson ms "$ms" --arg arch "$arch" \
			--arg name "$name" --arg tag "${name##*:}" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
			manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
				digest: $m, size: $ms, platform: {architecture: $arch, os: "linux"},
				annotations: {"io.containerd.image.name": $name,
					      "org.opencontainers.image.ref.name": $tag}}]
		}' >"$dir/index.json" &&
		echo '{"imageLayoutVersion": "1.0.0"}' >"$dir/oci-layout" &&
		tar --sort=name --numeric-owner --owner=0 --group=0 -C "$dir" \
			-cf "$out.tmp" oci-layout index.json blobs &&
		mv "$out.tmp" "$out"
	r=$?
	rm -rf "$dir" "$out.tmp"
	return $r
}
