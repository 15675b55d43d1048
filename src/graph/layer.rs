//! The Crosswalk layers a project belongs to, in the order a platform is built.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::VariantArray)]
pub enum Layer {
    Identity,
    Infra,
    Cluster,
    Services,
    Apps,
}

impl Layer {
    pub const ALL: &'static [Layer] = <Layer as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Identity => "identity",
            Layer::Infra => "infra",
            Layer::Cluster => "cluster",
            Layer::Services => "services",
            Layer::Apps => "apps",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layer {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Layer::ALL.iter().copied().find(|l| l.as_str() == s).ok_or(())
    }
}
