//! [`Plan::build`]'s orchestration: seed retries, the Homogeneous
//! measurement of each seed, and the fallbacks (a Standard build whose
//! seeds all fail and a Bumped build whose layer found no seed both
//! become Homogeneous builds). The sizes it builds to are the plan's.

use super::{HOMOGENEOUS_EXCESS_LIMIT_PPM, HOMOGENEOUS_SEEDS, NO_LIMIT, Plan, PlanShape};
use crate::band::{self, Banding};
use crate::bump;
use crate::error::Error;
use crate::fp;
use crate::kernels::SolveKernel;
use crate::layout::{self, Geometry, HEADER_BYTES, Kind};

impl Plan {
    /// [`Plan::build`] without the view: the filter's length. The C ABI
    /// calls this one, so that no view takes space on its stack. Each
    /// shape builds in a frame of its own and leaves the filter unsealed;
    /// the seal (the checksum, deep on small stacks) runs here, once,
    /// after those frames are gone, whatever seeds and fallbacks they
    /// tried.
    pub(crate) fn build_in_place(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        layout::clear_header(out);
        if let Some(n) = self.num_keys
            && hashes.len() > n
        {
            return Err(Error::TooManyKeys {
                limit: n as u64,
                given: hashes.len() as u64,
            });
        }
        let len = match &self.shape {
            PlanShape::Ribbon(g) => self.build_ribbon(g, hashes, scratch, out)?,
            PlanShape::Layers {
                first,
                upper_millis,
            } => self.build_layers(first, *upper_millis, hashes, scratch, out)?,
        };
        layout::seal(out.get_mut(..len).ok_or(Error::TooLarge)?);
        Ok(len)
    }

    /// A Bumped plan's layers (unsealed), or its Homogeneous fallback
    /// when a layer finds no seed (in this frame rather than the
    /// caller's: one result fewer there, under every build). Bumped
    /// builds split the scratch and check both buffers themselves; they
    /// write at most `filter_bytes`.
    #[inline(never)]
    fn build_layers(
        &self,
        first: &Geometry,
        upper_millis: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let solve =
            SolveKernel::new(self.backend(), first.width).ok_or(Error::BackendUnavailable)?;
        let shape = self.layer_shape(first, upper_millis);
        match bump::build(&shape, hashes, &solve, scratch, out) {
            Err(Error::ConstructionFailed) => self.build_bumped_fallback(hashes, scratch, out),
            built => built,
        }
    }

    /// The Homogeneous filter a Bumped build whose layer found no seed
    /// falls back to ([`Plan::bumped_fallback`]), unsealed.
    #[inline(never)]
    fn build_bumped_fallback(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let plan = self.bumped_fallback(hashes)?;
        plan.build_ribbon(plan.geometry(), hashes, scratch, out)
    }

    /// A plan of one ribbon, Standard or Homogeneous (unsealed).
    #[inline(never)]
    fn build_ribbon(
        &self,
        g: &Geometry,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let needed = self.scratch_words();
        let scratch_too_small = Error::ScratchTooSmall {
            needed,
            given: scratch.len(),
        };
        if scratch.len() < needed {
            return Err(scratch_too_small);
        }
        let (scratch, sort) = scratch
            .split_at_mut_checked(self.banding_scratch_words())
            .ok_or(scratch_too_small)?;
        let len = self.filter_bytes();
        let out_len = out.len();
        let out = out.get_mut(..len).ok_or(Error::OutputTooSmall {
            needed: len,
            given: out_len,
        })?;
        if !g.kind.is_standard() {
            if self.num_keys.is_none() && hashes.len() > self.key_capacity() {
                return Err(Error::TooManyKeys {
                    limit: self.key_capacity() as u64,
                    given: hashes.len() as u64,
                });
            }
            self.build_homogeneous(hashes, scratch, sort, out)?;
        } else if !self.build_standard(hashes, scratch, sort, out)? {
            self.build_standard_fallback(hashes, scratch, sort, out)?;
        }
        Ok(len)
    }

    /// A Standard build whose seeds all failed (degenerate or adversarial
    /// hashes): the same geometry as Homogeneous Ribbon holds them (no
    /// false negatives; its FP rate, measured, is in the header's kind's
    /// hands). Out of line: the fallback plan is not in the frame of
    /// every build.
    #[inline(never)]
    fn build_standard_fallback(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<(), Error> {
        let fallback = self.homogeneous_fallback(hashes.len())?;
        fallback.build_homogeneous(hashes, scratch, sort, out)
    }

    /// The Homogeneous plan over this Standard plan's geometry that a build
    /// falls back to when every seed fails, for `n` hashes:
    /// [`Error::ConstructionFailed`] for a [`Plan::with_slots`] plan the
    /// hashes overload even as Homogeneous Ribbon.
    fn homogeneous_fallback(&self, n: usize) -> Result<Plan, Error> {
        let g = self.geometry();
        let geometry = Geometry::new(
            Kind::Homogeneous,
            g.width,
            g.num_blocks,
            g.lower_columns,
            g.upper_start_block,
        )?;
        let plan = Plan {
            shape: PlanShape::Ribbon(geometry),
            max_seeds: self.max_seeds.min(HOMOGENEOUS_SEEDS),
            ..*self
        };
        if self.num_keys.is_none() && n > plan.key_capacity() {
            return Err(Error::ConstructionFailed);
        }
        Ok(plan)
    }

    /// The Homogeneous plan a Bumped build falls back to when a layer
    /// finds no seed (hashes that defeat every seed it tries, the plan's
    /// and those from its keys' digest, or a plan of one seed): the
    /// densest Homogeneous filter of `hashes` within this plan's
    /// [`Plan::filter_bytes`] ([`Plan::for_bytes`]), with the same backend
    /// and seed count and a first seed from a digest of the hashes (as a
    /// layer's retries take theirs), so that hashes crafted against the
    /// plan's seeds land like any others. It fits the output and the scratch of the
    /// Bumped plan (`tests/plan.rs` checks the scratch over a sweep of
    /// sizes and bits), and it cannot fail: a Bumped filter build always
    /// gives a filter within its planned bytes. Its FP rate is that of
    /// Homogeneous Ribbon at those bytes, about 2^(-r / 1.09) at w = 64
    /// and 2^(-r / 1.05) at w = 128 for `r` bits per key where Bumped
    /// Ribbon has 2^-r (the header says Homogeneous).
    fn bumped_fallback(&self, hashes: &[u64]) -> Result<Plan, Error> {
        let (width, n, bytes) = (self.geometry().width, hashes.len(), self.filter_bytes());
        let plan = Plan::for_bytes(Kind::Homogeneous, width, n, bytes)?;
        let salt = u64::from(self.seed) << 32 | u64::from(u32::MAX - 1);
        let digest = bump::key_set_digest(hashes.iter().copied(), salt);
        Ok(Plan {
            seed: bump::retry_seed(digest, 0),
            backend: self.backend,
            max_seeds: self.max_seeds.min(HOMOGENEOUS_SEEDS),
            ..plan
        })
    }

    /// The most hashes a Homogeneous [`Plan::with_slots`] build accepts:
    /// one per slot. More keys than slots overload the whole ribbon, and the
    /// filter would match almost every key.
    fn key_capacity(&self) -> usize {
        self.geometry().num_slots()
    }

    /// Standard builds: the first seed whose banding is consistent. Not
    /// inlined (nor is [`Plan::build_homogeneous`]): each kind's frame
    /// then stands alone on small stacks.
    #[inline(never)]
    fn build_standard(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<bool, Error> {
        for attempt in 0..self.max_seeds() {
            let seed = self.seed.wrapping_add(attempt);
            if self.band_and_solve(seed, hashes, scratch, sort, out)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Homogeneous builds: keep the first seed whose measured excess keeps
    /// the FP promise. If none of [`HOMOGENEOUS_SEEDS`] does (adversarial or
    /// degenerate keys), the filter of the seed with the least excess.
    #[inline(never)]
    fn build_homogeneous(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<(), Error> {
        let mut best: Option<(u64, u32)> = None;
        let mut last = self.seed;
        for attempt in 0..self.max_seeds() {
            last = self.seed.wrapping_add(attempt);
            let excess = self.solve_homogeneous(last, hashes, scratch, sort, out)?;
            if excess <= HOMOGENEOUS_EXCESS_LIMIT_PPM {
                return Ok(());
            }
            if best.is_none_or(|(least, _)| excess < least) {
                best = Some((excess, last));
            }
        }
        if let Some((_, seed)) = best.filter(|&(_, seed)| seed != last) {
            self.solve_homogeneous(seed, hashes, scratch, sort, out)?;
        }
        Ok(())
    }

    /// Bands `hashes` with `seed`, writes the filter to `out` and returns
    /// its measured Homogeneous excess in ppm ([`fp::homogeneous_excess_ppm`]).
    #[inline(always)]
    fn solve_homogeneous(
        &self,
        seed: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<u64, Error> {
        // Homogeneous banding never meets an inconsistency, and the build
        // checked the key count.
        if !self.band_and_solve(seed, hashes, scratch, sort, out)? {
            return Err(Error::ConstructionFailed);
        }
        let payload = out.get(HEADER_BYTES..).unwrap_or(&[]);
        Ok(fp::homogeneous_excess_ppm(self.geometry(), payload))
    }

    /// Bands `hashes` with `seed` and, if the system is consistent, writes
    /// the filter (unsealed) to `out`; whether it was. The banding runs in
    /// a frame of its own ([`Plan::band`]), gone before the
    /// back-substitution and a Homogeneous measurement run.
    #[inline(always)]
    fn band_and_solve(
        &self,
        seed: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<bool, Error> {
        let Some(num_keys) = self.band(seed, hashes, scratch, sort)? else {
            return Ok(false);
        };
        let g = self.geometry();
        let solve = SolveKernel::new(self.backend(), g.width).ok_or(Error::BackendUnavailable)?;
        let rows = band::scratch_words(g)
            .and_then(|words| scratch.get(..words))
            .ok_or(Error::TooLarge)?;
        band::solve_unsealed(g, seed, &solve, num_keys, rows, out)?;
        Ok(true)
    }

    /// Bands `hashes` with `seed` into the first words of `scratch`: the
    /// banded keys if the system is consistent.
    #[inline(never)]
    fn band(
        &self,
        seed: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
    ) -> Result<Option<u64>, Error> {
        let mut banding = Banding::new(*self.geometry(), seed, self.backend(), scratch, NO_LIMIT)?;
        if banding.add_all_sorted(hashes, sort).is_err() {
            return Ok(None);
        }
        Ok(Some(banding.num_keys()))
    }
}
