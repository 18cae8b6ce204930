//! What a simulated trace is made of: the type hierarchy, the container
//! tree and the values entities take. Names are kept as raw bytes (traces
//! are not always UTF-8) and looked up by identifier (the alias when there
//! is one, else the name), as Pajé requires.

use crate::hash::NameMap;
use crate::numparse::Color;

/// Index of a type in [`Model::types`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// Index of a container in [`Model::containers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerId(pub u32);

/// Index of a value in [`Model::values`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

/// The root type (`0`).
pub const ROOT_TYPE: TypeId = TypeId(0);
/// The root container (`0`).
pub const ROOT_CONTAINER: ContainerId = ContainerId(0);

/// What the entities of a type are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeNature {
    /// Containers (rows of a control-flow view).
    Container,
    /// States: intervals with a value, stacked by push/pop.
    State,
    /// Events: instants with a value.
    Event,
    /// Variables: piecewise-constant numeric values.
    Variable,
    /// Links between two containers of the given types.
    Link {
        /// Type of the start containers.
        start: TypeId,
        /// Type of the end containers.
        end: TypeId,
    },
}

impl TypeNature {
    /// The word pj_dump uses for this nature.
    pub fn kind_name(self) -> &'static str {
        match self {
            TypeNature::Container => "Container",
            TypeNature::State => "State",
            TypeNature::Event => "Event",
            TypeNature::Variable => "Variable",
            TypeNature::Link { .. } => "Link",
        }
    }
}

fn identifier<'a>(name: &'a [u8], alias: &'a [u8]) -> &'a [u8] {
    if alias.is_empty() {
        name
    } else {
        alias
    }
}

/// A container type or an entity type.
#[derive(Debug, Clone)]
pub struct EntityType {
    /// Display name.
    pub name: Box<[u8]>,
    /// Alias (may be empty).
    pub alias: Box<[u8]>,
    /// What its entities are.
    pub nature: TypeNature,
    /// The container type it belongs to (`None` for the root type).
    pub parent: Option<TypeId>,
    /// Colour given by `PajeDefineVariableType`.
    pub color: Option<Color>,
    pub(crate) children: Vec<TypeId>,
    pub(crate) values: NameMap<ValueId>,
}

impl EntityType {
    /// The identifier events use to name this type.
    pub fn identifier(&self) -> &[u8] {
        identifier(&self.name, &self.alias)
    }

    /// Types directly under this one, in definition order.
    pub fn children(&self) -> &[TypeId] {
        &self.children
    }

    /// The value with identifier `ident`, if defined or already used.
    pub fn value(&self, ident: &[u8]) -> Option<ValueId> {
        self.values.get(ident)
    }
}

/// A value of a state, event or link type.
#[derive(Debug, Clone)]
pub struct EntityValue {
    /// Display name.
    pub name: Box<[u8]>,
    /// Alias (may be empty).
    pub alias: Box<[u8]>,
    /// The type it belongs to.
    pub type_id: TypeId,
    /// Colour from `PajeDefineEntityValue`.
    pub color: Option<Color>,
}

/// A container instance.
#[derive(Debug, Clone)]
pub struct Container {
    /// Display name.
    pub name: Box<[u8]>,
    /// Alias (may be empty).
    pub alias: Box<[u8]>,
    /// Its type.
    pub type_id: TypeId,
    /// Its parent (`None` for the root).
    pub parent: Option<ContainerId>,
    /// Creation time.
    pub start: f64,
    /// Destruction time once destroyed; before that, the time of the last
    /// event it received (-1 when none), as pajeng keeps it.
    pub end: f64,
    /// True once destroyed (explicitly or at the end of the trace).
    pub destroyed: bool,
    pub(crate) children: Vec<ContainerId>,
}

impl Container {
    /// The identifier events use to name this container.
    pub fn identifier(&self) -> &[u8] {
        identifier(&self.name, &self.alias)
    }

    /// Child containers, in creation order.
    pub fn children(&self) -> &[ContainerId] {
        &self.children
    }
}

/// Types, containers and values of a trace.
#[derive(Debug, Clone)]
pub struct Model {
    types: Vec<EntityType>,
    type_ids: NameMap<TypeId>,
    containers: Vec<Container>,
    container_ids: NameMap<ContainerId>,
    values: Vec<EntityValue>,
}

impl Default for Model {
    fn default() -> Self {
        Self::new()
    }
}

impl Model {
    /// A model holding only the root type and root container, both `0`.
    pub fn new() -> Model {
        let mut m = Model {
            types: Vec::new(),
            type_ids: NameMap::default(),
            containers: Vec::new(),
            container_ids: NameMap::default(),
            values: Vec::new(),
        };
        m.types.push(EntityType {
            name: b"0"[..].into(),
            alias: b"0"[..].into(),
            nature: TypeNature::Container,
            parent: None,
            color: None,
            children: Vec::new(),
            values: NameMap::default(),
        });
        m.type_ids.insert(b"0", ROOT_TYPE);
        m.containers.push(Container {
            name: b"0"[..].into(),
            alias: b"0"[..].into(),
            type_id: ROOT_TYPE,
            parent: None,
            start: 0.0,
            end: -1.0,
            destroyed: false,
            children: Vec::new(),
        });
        m.container_ids.insert(b"0", ROOT_CONTAINER);
        m
    }

    /// All types; index with [`TypeId`].
    pub fn types(&self) -> &[EntityType] {
        &self.types
    }

    /// Type `id`.
    pub fn type_(&self, id: TypeId) -> &EntityType {
        &self.types[id.0 as usize]
    }

    /// The type events call `ident`.
    pub fn type_by_ident(&self, ident: &[u8]) -> Option<TypeId> {
        self.type_ids.get(ident)
    }

    /// All containers (the root first); index with [`ContainerId`].
    pub fn containers(&self) -> &[Container] {
        &self.containers
    }

    /// Container `id`.
    pub fn container(&self, id: ContainerId) -> &Container {
        &self.containers[id.0 as usize]
    }

    /// The container events call `ident` (destroyed ones included).
    pub fn container_by_ident(&self, ident: &[u8]) -> Option<ContainerId> {
        self.container_ids.get(ident)
    }

    /// All values; index with [`ValueId`].
    pub fn values(&self) -> &[EntityValue] {
        &self.values
    }

    /// Value `id`.
    pub fn value(&self, id: ValueId) -> &EntityValue {
        &self.values[id.0 as usize]
    }

    pub(crate) fn container_mut(&mut self, id: ContainerId) -> &mut Container {
        &mut self.containers[id.0 as usize]
    }

    pub(crate) fn add_type(
        &mut self,
        parent: TypeId,
        name: &[u8],
        alias: &[u8],
        nature: TypeNature,
        color: Option<Color>,
    ) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(EntityType {
            name: name.into(),
            alias: alias.into(),
            nature,
            parent: Some(parent),
            color,
            children: Vec::new(),
            values: NameMap::default(),
        });
        self.type_ids.insert(identifier(name, alias), id);
        self.types[parent.0 as usize].children.push(id);
        id
    }

    pub(crate) fn add_value(
        &mut self,
        type_id: TypeId,
        name: &[u8],
        alias: &[u8],
        color: Option<Color>,
    ) -> ValueId {
        let id = ValueId(self.values.len() as u32);
        self.values.push(EntityValue {
            name: name.into(),
            alias: alias.into(),
            type_id,
            color,
        });
        self.types[type_id.0 as usize]
            .values
            .insert(identifier(name, alias), id);
        id
    }

    /// The value `ident` of type `type_id`, created on first use as pajeng
    /// does for values that were never declared.
    pub(crate) fn value_or_insert(&mut self, type_id: TypeId, ident: &[u8]) -> ValueId {
        match self.types[type_id.0 as usize].values.get(ident) {
            Some(v) => v,
            None => self.add_value(type_id, ident, ident, None),
        }
    }

    pub(crate) fn add_container(
        &mut self,
        parent: ContainerId,
        type_id: TypeId,
        name: &[u8],
        alias: &[u8],
        start: f64,
    ) -> ContainerId {
        let id = ContainerId(self.containers.len() as u32);
        self.containers.push(Container {
            name: name.into(),
            alias: alias.into(),
            type_id,
            parent: Some(parent),
            start,
            end: -1.0,
            destroyed: false,
            children: Vec::new(),
        });
        self.container_ids.insert(identifier(name, alias), id);
        self.containers[parent.0 as usize].children.push(id);
        id
    }
}
