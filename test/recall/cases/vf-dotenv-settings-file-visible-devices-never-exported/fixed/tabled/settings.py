from typing import Optional

from dotenv import find_dotenv
from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    TORCH_DEVICE: Optional[str] = None
    TABLE_REC_BATCH_SIZE: Optional[int] = None
    DETECTOR_BATCH_SIZE: Optional[int] = None

    class Config:
        # values from the environment or from local.env fill the fields above
        env_file = find_dotenv("local.env")
        extra = "ignore"


settings = Settings()
