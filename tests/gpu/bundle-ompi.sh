#!/usr/bin/env bash
# tests/gpu/bundle-ompi.sh DIR - Debian 12's Open MPI 4.1 and the libraries it
# and collc load, unpacked into DIR (dpkg -x, no install), with DIR/env.sh to
# source: for a machine with a GPU but no MPI (tests/gpu/run.sh there:
# `. DIR/env.sh && GPU_PREBUILT=1 tests/gpu/run.sh`). Run it on Debian 12
# (apt-get download needs the Debian archive); about 25 MB.
#
# What the relocation needs besides OPAL_PREFIX (each seen on a GPU machine):
# Debian's /etc/openmpi/openmpi-mca-params.conf, which excludes the ucx, ofi
# and openib components: without it Open MPI picked them and a 8-byte
# alltoall at p = 2 took 12-27 us instead of 0.25; and PMIx's plugin path
# (its warning about compression otherwise).
set -euo pipefail
dir=$(realpath -m "${1:?usage: bundle-ompi.sh DIR}")
mkdir -p "$dir/debs" "$dir/root"
pkgs=(libopenmpi3 openmpi-bin openmpi-common libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7
      libpmix2 libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libpsm2-2 libpsm-infinipath1
      libnl-3-200 libnl-route-3-200 libnuma1 libmunge2 libudev1 libuuid1 libatomic1 zlib1g libjansson4)
(cd "$dir/debs" && apt-get download "${pkgs[@]}" >/dev/null)
for f in "$dir"/debs/*.deb; do dpkg -x "$f" "$dir/root"; done
rm -rf "$dir/debs" "$dir/root/usr/share/doc" "$dir/root/usr/share/man"
cat >"$dir/env.sh" <<'EOF'
# source this: the Open MPI unpacked next to it
R=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/root
L=$R/usr/lib/x86_64-linux-gnu
export OPAL_PREFIX=$R/usr PATH=$R/usr/bin:$PATH
export LD_LIBRARY_PATH=$L:$R/lib/x86_64-linux-gnu:$L/pmix2/lib:${LD_LIBRARY_PATH:-}
export OMPI_MCA_mca_base_param_files=$R/etc/openmpi/openmpi-mca-params.conf
export PMIX_PREFIX=$L/pmix2 PMIX_MCA_mca_base_component_path=$L/pmix2/lib/pmix
export PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
echo "$dir/env.sh: source it, then mpirun.openmpi"
