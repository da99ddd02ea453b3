import treelens
from tests.models import MODEL_FACTORIES


def test_every_supported_model_has_a_factory():
    missing = sorted(set(treelens.supported_models()) - set(MODEL_FACTORIES))
    assert not missing, (
        f"supported models without a factory in tests/models.py: {missing}"
    )


def test_factories_fit_the_named_class():
    for name, factory in MODEL_FACTORIES.items():
        case = factory()
        assert type(case.model).__name__ == name.split(".")[1].split("[")[0]
