//! Facts about the machine a run used, for `meta.csv` and the report: the
//! GPU as gsync describes it, the driver, NVRTC, the date.

use std::time::{SystemTime, UNIX_EPOCH};

use gsync::{Backend, Gpu};

use crate::record::Meta;

/// Records what gsync and the system say about `gpu` into `meta`.
pub fn describe(gpu: &Gpu, meta: &mut Meta) {
    let info = gpu.info();
    meta.set("backend", gpu.backend().to_string());
    meta.set("gpu", info.name.clone());
    meta.set("sm_count", info.sm_count.to_string());
    let (major, minor) = info.compute_capability;
    meta.set("compute_capability", format!("{major}.{minor}"));
    let memory = if info.total_memory == 0 {
        "host memory".to_owned()
    } else {
        format!("{:.1} GiB", info.total_memory as f64 / f64::from(1u32 << 30))
    };
    meta.set("memory", memory);
    meta.set("cooperative_launch", info.cooperative_launch.to_string());
    meta.set("date", utc_now());
    if gpu.backend() == Backend::Cuda {
        meta.set("driver", driver_version().unwrap_or_else(|| "not found in /proc/driver/nvidia/version".into()));
        meta.set(
            "driver_cuda",
            info.driver_cuda_version.map_or("unknown".into(), |(major, minor)| format!("{major}.{minor}")),
        );
        meta.set(
            "nvrtc",
            match gsync::nvrtc_version() {
                Ok((major, minor)) => format!("{major}.{minor}"),
                Err(e) => format!("unknown ({})", first_line(&e.to_string())),
            },
        );
        if let Ok(toolkit) = gsync::toolkit() {
            meta.set("nvrtc_library", toolkit.nvrtc_library().display().to_string());
        }
    } else {
        meta.set("driver", "none (CPU emulator)");
        meta.set("driver_cuda", "none (CPU emulator)");
        meta.set("nvrtc", "not used (CPU emulator)");
    }
}

/// The NVIDIA kernel module's version, as `/proc/driver/nvidia/version` states it.
pub fn driver_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    parse_driver_version(&text)
}

/// The version number in the first line of `/proc/driver/nvidia/version`:
/// the first word after "Kernel Module" (or "Kernel Module for …").
pub fn parse_driver_version(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let after = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    after
        .split_whitespace()
        .find(|word| word.chars().next().is_some_and(|c| c.is_ascii_digit()) && word.contains('.'))
        .map(str::to_owned)
}

/// The current time in UTC, as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format_utc(seconds)
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM UTC`.
pub fn format_utc(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let (year, month, day) = civil_from_days(days);
    let minutes = seconds % 86_400 / 60;
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", minutes / 60, minutes % 60)
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The first line of a possibly long message.
pub fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian_utc() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(format_utc(4_102_444_799), "2099-12-31 23:59 UTC");
    }

    #[test]
    fn the_driver_version_is_read_from_the_module_line() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 10:00:00 UTC 2025\n\
                    GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
        assert_eq!(parse_driver_version(text).as_deref(), Some("580.159.04"));
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n";
        assert_eq!(parse_driver_version(open).as_deref(), Some("570.86.15"));
        assert_eq!(parse_driver_version("no driver here"), None);
    }

    #[test]
    fn the_emulator_is_described_as_such() {
        let mut meta = Meta::default();
        describe(&Gpu::emulator(), &mut meta);
        assert_eq!(meta.get("backend"), Some("CPU emulator"));
        assert_eq!(meta.get("gpu"), Some("gsync CPU emulator"));
        assert!(meta.get("date").is_some_and(|d| d.ends_with("UTC")));
    }
}
