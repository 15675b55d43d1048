//! A chart package (`NAME-VERSION.tgz`, what `helm package` writes and a repository serves):
//! read whole into memory, checked to be the chart it should be, and written again with some
//! files replaced (a values schema made whole), every other entry as it was.

use std::io::{Read as _, Write as _};

/// The largest package the runner takes (kube-prometheus-stack, the biggest of the programs'
/// charts, is 0.6 MB packed, 5.5 MB unpacked).
const LARGEST_PACKED: usize = 64 << 20;
const LARGEST_UNPACKED: u64 = 256 << 20;

/// One file of a package.
#[derive(Debug, Clone)]
pub(crate) struct PackedFile {
    pub(crate) path: String,
    pub(crate) mode: u32,
    pub(crate) mtime: u64,
    pub(crate) bytes: Vec<u8>,
}

/// A package's files, in their order.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) entries: Vec<PackedFile>,
}

/// Why bytes are not the package they should be.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotAPackage {
    #[error("it is not gzip data (it starts with {0:?})")]
    NotGzip(String),
    #[error("it is larger than {} MB", LARGEST_PACKED >> 20)]
    TooLarge,
    #[error("it is cut short or damaged: {0}")]
    Damaged(std::io::Error),
    #[error("it holds no {0}/Chart.yaml")]
    NoChartYaml(String),
    #[error("its {path} is not readable YAML: {why}")]
    ChartYaml { path: String, why: String },
    #[error("its Chart.yaml says {field} {found:?}, not {wanted:?}")]
    Differs {
        field: &'static str,
        found: String,
        wanted: String,
    },
}

impl Package {
    /// `bytes` read as a gzipped tar of regular files (directories and links are skipped, as
    /// Helm's loader skips them).
    pub(crate) fn read(bytes: &[u8]) -> Result<Self, NotAPackage> {
        if bytes.len() > LARGEST_PACKED {
            return Err(NotAPackage::TooLarge);
        }
        if !bytes.starts_with(&[0x1f, 0x8b]) {
            let start: String = String::from_utf8_lossy(&bytes[..bytes.len().min(24)])
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            return Err(NotAPackage::NotGzip(start.trim().to_string()));
        }
        let gz = flate2::read::GzDecoder::new(bytes).take(LARGEST_UNPACKED);
        let mut archive = tar::Archive::new(gz);
        let mut entries = Vec::new();
        for entry in archive.entries().map_err(NotAPackage::Damaged)? {
            let mut entry = entry.map_err(NotAPackage::Damaged)?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry
                .path()
                .map_err(NotAPackage::Damaged)?
                .to_string_lossy()
                .into_owned();
            let mode = entry.header().mode().unwrap_or(0o644);
            let mtime = entry.header().mtime().unwrap_or(0);
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).map_err(NotAPackage::Damaged)?;
            entries.push(PackedFile {
                path,
                mode,
                mtime,
                bytes,
            });
        }
        Ok(Package { entries })
    }

    /// Checks that its top `Chart.yaml` names `name` at `version`.
    pub(crate) fn check(&self, name: &str, version: &str) -> Result<(), NotAPackage> {
        let path = format!("{name}/Chart.yaml");
        let chart = self
            .file(&path)
            .ok_or_else(|| NotAPackage::NoChartYaml(name.to_string()))?;
        let text = String::from_utf8_lossy(chart);
        let meta: serde_json::Value = serde_saphyr::from_str(&text).map_err(|e| NotAPackage::ChartYaml {
            path: path.clone(),
            why: e.to_string(),
        })?;
        for (field, wanted) in [("name", name), ("version", version)] {
            let found = scalar(meta.get(field));
            if found.trim_start_matches('v') != wanted.trim_start_matches('v') {
                return Err(NotAPackage::Differs {
                    field,
                    found,
                    wanted: wanted.to_string(),
                });
            }
        }
        Ok(())
    }

    pub(crate) fn file(&self, path: &str) -> Option<&[u8]> {
        self.entries.iter().find(|e| e.path == path).map(|e| e.bytes.as_slice())
    }

    /// Every values schema in it: the chart's and each subchart's (`charts/*/…`, nested).
    pub(crate) fn schemas(&self) -> impl Iterator<Item = &PackedFile> {
        self.entries.iter().filter(|e| {
            let parts: Vec<&str> = e.path.split('/').collect();
            // CHART/(charts/SUB/)*values.schema.json
            let [_, middle @ .., "values.schema.json"] = parts.as_slice() else {
                return false;
            };
            middle.len() % 2 == 0 && middle.chunks(2).all(|pair| pair[0] == "charts")
        })
    }

    /// Replaces the bytes of the file at `path`.
    pub(crate) fn replace(&mut self, path: &str, bytes: Vec<u8>) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.path == path) {
            e.bytes = bytes;
        }
    }

    /// The package as a gzipped tar, as `helm package` writes one (USTAR, regular files, each
    /// with its mode and time).
    pub(crate) fn write(&self) -> std::io::Result<Vec<u8>> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        for e in &self.entries {
            let mut header = tar::Header::new_ustar();
            header.set_size(e.bytes.len() as u64);
            header.set_mode(e.mode);
            header.set_mtime(e.mtime);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, &e.path, e.bytes.as_slice())?;
        }
        let mut gz = tar.into_inner()?;
        gz.flush()?;
        gz.finish()
    }
}

/// A YAML scalar as text (a version may be read as a number).
fn scalar(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package() -> Package {
        Package {
            entries: vec![
                PackedFile {
                    path: "demo/Chart.yaml".into(),
                    mode: 0o644,
                    mtime: 1_700_000_000,
                    bytes: b"apiVersion: v2\nname: demo\nversion: 1.2.0\n".to_vec(),
                },
                PackedFile {
                    path: "demo/values.schema.json".into(),
                    mode: 0o644,
                    mtime: 1_700_000_000,
                    bytes: b"{}".to_vec(),
                },
                PackedFile {
                    path: "demo/charts/sub/values.schema.json".into(),
                    mode: 0o644,
                    mtime: 1_700_000_000,
                    bytes: b"{}".to_vec(),
                },
                PackedFile {
                    path: "demo/templates/values.schema.json".into(),
                    mode: 0o644,
                    mtime: 1_700_000_000,
                    bytes: b"{}".to_vec(),
                },
            ],
        }
    }

    #[test]
    fn a_package_written_reads_back_as_itself_with_a_file_replaced() {
        let mut p = package();
        p.replace("demo/values.schema.json", b"{\"type\": \"object\"}".to_vec());
        let back = Package::read(&p.write().unwrap()).unwrap();
        assert_eq!(back.entries.len(), 4);
        assert_eq!(back.file("demo/values.schema.json").unwrap(), b"{\"type\": \"object\"}");
        assert_eq!(back.entries[0].mtime, 1_700_000_000);
        back.check("demo", "1.2.0").unwrap();
        let schemas: Vec<&str> = back.schemas().map(|e| e.path.as_str()).collect();
        assert_eq!(
            schemas,
            ["demo/values.schema.json", "demo/charts/sub/values.schema.json"]
        );
    }

    #[test]
    fn html_a_cut_package_and_another_chart_are_each_refused() {
        let html = Package::read(b"<!DOCTYPE html><html>Not Found</html>").unwrap_err();
        assert!(
            html.to_string()
                .contains("not gzip data (it starts with \"<!DOCTYPE html><html>Not"),
            "{html}"
        );
        let bytes = package().write().unwrap();
        let cut = Package::read(&bytes[..bytes.len() / 2]);
        assert!(matches!(cut, Err(NotAPackage::Damaged(_))), "{cut:?}");
        let other = package().check("demo", "1.3.0").unwrap_err();
        assert_eq!(
            other.to_string(),
            "its Chart.yaml says version \"1.2.0\", not \"1.3.0\""
        );
        assert!(matches!(
            package().check("other", "1.2.0"),
            Err(NotAPackage::NoChartYaml(_))
        ));
    }
}
